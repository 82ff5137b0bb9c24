// cuSPARSE SpMM (exec/CusparseSpmm.h) against a host double loop: int32 and
// int64 CSRs with empty rows and one heavy row, empty matrices, F that is not
// a multiple of 4, strided X and Y, and cached descriptors that follow new
// pointers and leading dimensions. Skipped, saying so, without a device.
#include "exec/CusparseSpmm.h"

#include "runtime/CudaCheck.h"
#include "runtime/DeviceBuffer.h"
#include "support/Error.h"

#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace gnnjit::test {
namespace {

using exec::CusparseSpmm;
using exec::DeviceCsrView;
using runtime::DeviceBuffer;

/// Marks Y's padding (columns F..ld-1) so strided writes that stray show up.
constexpr float kPad = 1234.5f;

class Stream {
public:
  Stream() { GNNJIT_CUDA_CHECK(cudaStreamCreate(&stream_)); }
  ~Stream() { (void)cudaStreamDestroy(stream_); }
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;
  operator cudaStream_t() const { return stream_; }
  void sync() const { GNNJIT_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

private:
  cudaStream_t stream_ = nullptr;
};

template <typename Index> struct HostCsr {
  int64_t rows = 0, cols = 0;
  std::vector<Index> offsets{0}, indices;
  std::vector<float> values;
};

/// rows x cols with row 0 empty, every fifth row empty, row 1 holding most
/// columns, the rest 1..6 random distinct columns, ascending; with
/// `repeats`, every row with entries also holds its first column twice more
/// (a graph's duplicate edges: the CSR's rows then repeat a column).
template <typename Index> HostCsr<Index> randomCsr(int64_t rows, int64_t cols, uint32_t seed, bool repeats = false) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::uniform_int_distribution<int> degree(1, 6);
  HostCsr<Index> csr;
  csr.rows = rows;
  csr.cols = cols;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<bool> taken(static_cast<size_t>(cols));
    int count = 0;
    if (r == 1)
      count = static_cast<int>(cols * 9 / 10);
    else if (r != 0 && r % 5 != 0)
      count = std::min<int>(degree(rng), static_cast<int>(cols));
    std::uniform_int_distribution<int64_t> column(0, cols - 1);
    for (int placed = 0; placed < count;) {
      const int64_t c = column(rng);
      if (!taken[static_cast<size_t>(c)]) {
        taken[static_cast<size_t>(c)] = true;
        ++placed;
      }
    }
    bool first = true;
    for (int64_t c = 0; c < cols; ++c)
      if (taken[static_cast<size_t>(c)]) {
        for (int copy = 0; copy < (repeats && first ? 3 : 1); ++copy) {
          csr.indices.push_back(static_cast<Index>(c));
          csr.values.push_back(value(rng));
        }
        first = false;
      }
    csr.offsets.push_back(static_cast<Index>(csr.indices.size()));
  }
  return csr;
}

/// A graph's CSR as gnnjit builds it (edges kept in input order within a
/// row): columns unsorted and repeated anywhere in a row, row 5 a hub of
/// `hub` entries, other rows of 0 to `otherDegree`, the last 40 rows and
/// columns empty (isolated nodes).
template <typename Index>
HostCsr<Index> unsortedCsrWithHub(int64_t rows, int64_t cols, uint32_t seed, int hub, int otherDegree) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::uniform_int_distribution<int64_t> column(0, cols - 41);
  std::uniform_int_distribution<int> degree(0, otherDegree);
  HostCsr<Index> csr;
  csr.rows = rows;
  csr.cols = cols;
  for (int64_t r = 0; r < rows; ++r) {
    const int count = r >= rows - 40 ? 0 : r == 5 ? hub : degree(rng);
    for (int i = 0; i < count; ++i) {
      csr.indices.push_back(static_cast<Index>(column(rng)));
      csr.values.push_back(value(rng));
    }
    csr.offsets.push_back(static_cast<Index>(csr.indices.size()));
  }
  return csr;
}

/// A host CSR copied to the device, with the view cuSPARSE gets.
template <typename Index> struct DeviceCsr {
  explicit DeviceCsr(const HostCsr<Index> &host)
      : offsets(DeviceBuffer<Index>::fromHost(host.offsets)), indices(DeviceBuffer<Index>::fromHost(host.indices)),
        values(DeviceBuffer<float>::fromHost(host.values)) {
    view.rows = host.rows;
    view.cols = host.cols;
    view.nnz = static_cast<int64_t>(host.indices.size());
    view.index = sizeof(Index) == 4 ? graph::IndexType::Int32 : graph::IndexType::Int64;
    view.offsets = offsets.data();
    view.indices = indices.data();
  }
  DeviceBuffer<Index> offsets, indices;
  DeviceBuffer<float> values;
  DeviceCsrView view;
};

/// rows x F with row stride ld; the padding holds kPad.
std::vector<float> randomDense(int64_t rows, int64_t F, int64_t ld, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  std::vector<float> dense(static_cast<size_t>(rows * ld), kPad);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t f = 0; f < F; ++f)
      dense[static_cast<size_t>(r * ld + f)] = value(rng);
  return dense;
}

/// Checks y (rows x F, stride ldy, downloaded) against A * x in doubles. The
/// tolerance is relative to the sum of |terms|, so cancellation does not
/// inflate it; the padding must still hold kPad.
template <typename Index>
void checkProduct(const HostCsr<Index> &a, const std::vector<float> &x, int64_t ldx, const std::vector<float> &y,
                  int64_t ldy, int64_t F, const std::string &what) {
  INFO(what);
  int bad = 0;
  for (int64_t r = 0; r < a.rows; ++r) {
    for (int64_t f = 0; f < F; ++f) {
      double sum = 0, scale = 0;
      for (auto e = static_cast<int64_t>(a.offsets[static_cast<size_t>(r)]);
           e < static_cast<int64_t>(a.offsets[static_cast<size_t>(r + 1)]); ++e) {
        const double term = double(a.values[static_cast<size_t>(e)]) *
                             double(x[static_cast<size_t>(int64_t(a.indices[static_cast<size_t>(e)]) * ldx + f)]);
        sum += term;
        scale += std::abs(term);
      }
      const double got = y[static_cast<size_t>(r * ldy + f)];
      if (!(std::abs(got - sum) <= 1e-5 * scale + 1e-30) && bad++ < 5)
        FAIL_CHECK("row " << r << " column " << f << ": got " << got << ", expected " << sum);
    }
    for (int64_t f = F; f < ldy; ++f)
      if (y[static_cast<size_t>(r * ldy + f)] != kPad && bad++ < 5)
        FAIL_CHECK("row " << r << " padding column " << f << " was written");
  }
  CHECK(bad == 0);
}

/// One X/Y pair on the device with the host copy of X.
struct Dense {
  Dense(int64_t xRows, int64_t yRows, int64_t F, int64_t ldx_, int64_t ldy_, uint32_t seed)
      : ldx(ldx_), ldy(ldy_), hostX(randomDense(xRows, F, ldx_, seed)),
        x(DeviceBuffer<float>::fromHost(hostX)),
        y(DeviceBuffer<float>::fromHost(std::vector<float>(static_cast<size_t>(yRows * ldy_), kPad))) {}
  int64_t ldx, ldy;
  std::vector<float> hostX;
  DeviceBuffer<float> x, y;
};

TEST_CASE_TEMPLATE("cuSPARSE SpMM matches the host product", Index, int32_t, int64_t) {
  Stream stream;
  const auto host = randomCsr<Index>(97, 61, 7);
  const DeviceCsr<Index> device(host);
  CusparseSpmm cached(device.view, device.values.data());

  for (int64_t F : {1, 3, 32, 130}) {
    CAPTURE(F);
    // Same F three times: dense, strided (new pointers and leading
    // dimensions), then dense again on the first pair's pointers.
    Dense first(host.cols, host.rows, F, F, F, 100 + static_cast<uint32_t>(F));
    Dense strided(host.cols, host.rows, F, F + 5, F + 3, 200 + static_cast<uint32_t>(F));
    for (Dense *d : {&first, &strided, &first}) {
      const std::string what = "cached, ldx " + std::to_string(d->ldx) + ", ldy " + std::to_string(d->ldy);
      d->y.upload(std::vector<float>(d->y.size(), kPad));
      cached.multiply(d->x.data(), d->ldx, d->y.data(), d->ldy, F, stream);
      stream.sync();
      checkProduct(host, d->hostX, d->ldx, d->y.download(), d->ldy, F, what);
    }
    const std::string alg = cached.algorithmName(F, stream);
    CHECK((alg == "alg1" || alg == "alg2"));
    MESSAGE("F = " << F << ": " << alg);

    strided.y.upload(std::vector<float>(strided.y.size(), kPad));
    exec::cusparseSpmmUncached(device.view, device.values.data(), strided.x.data(), strided.ldx, strided.y.data(),
                               strided.ldy, F, stream);
    stream.sync();
    checkProduct(host, strided.hostX, strided.ldx, strided.y.download(), strided.ldy, F, "uncached");
  }
  CHECK(cached.workspaceBytes() < (size_t(1) << 30));
}

TEST_CASE_TEMPLATE("every CSR algorithm sums repeated columns, empty rows and a hub", Index, int32_t, int64_t) {
  // A graph's CSR may repeat a column in a row (duplicate edges, several
  // self loops); each algorithm the timing may pick must sum them all.
  Stream stream;
  const auto host = randomCsr<Index>(301, 200, 11, true);
  const DeviceCsr<Index> device(host);
  CusparseSpmm cached(device.view, device.values.data());
  for (int64_t F : {4, 16, 64}) {
    for (int algorithm : {1, 2}) {
      CAPTURE(F);
      CAPTURE(algorithm);
      Dense d(host.cols, host.rows, F, F, F, 300 + static_cast<uint32_t>(F));
      cached.multiply(d.x.data(), d.ldx, d.y.data(), d.ldy, F, algorithm, stream);
      stream.sync();
      checkProduct(host, d.hostX, d.ldx, d.y.download(), d.ldy, F, "repeated columns, alg" + std::to_string(algorithm));
    }
  }
}

TEST_CASE_TEMPLATE("both CSR algorithms sum unsorted, scattered repeats and hubs of any length", Index, int32_t,
                   int64_t) {
  // gnnjit's CSR keeps a row's edges in input order: columns are not sorted
  // and a column may repeat anywhere in the row (duplicate edges). On such
  // matrices CSR ALG3 (CUDA 13.0, H100) left the hub row unwritten (a hub of
  // 300 among rows of up to 30) or faulted (a hub of 512 alone), so gnnjit
  // does not use it; ALG1 and ALG2 must hold on all of them.
  Stream stream;
  for (int hub : {100, 300, 512, 4096}) {
    for (int otherDegree : {0, 30}) {
      const auto host = unsortedCsrWithHub<Index>(200, 200, 17, hub, otherDegree);
      const DeviceCsr<Index> device(host);
      for (int64_t F : {1, 16, 64}) {
        for (int algorithm : {0, 1, 2}) {
          CAPTURE(hub);
          CAPTURE(otherDegree);
          CAPTURE(F);
          CAPTURE(algorithm);
          CusparseSpmm cached(device.view, device.values.data());
          Dense d(host.cols, host.rows, F, F, F, 500 + static_cast<uint32_t>(F));
          cached.multiply(d.x.data(), d.ldx, d.y.data(), d.ldy, F, algorithm, stream);
          stream.sync();
          checkProduct(host, d.hostX, d.ldx, d.y.download(), d.ldy, F, "unsorted");
        }
      }
    }
  }
}

TEST_CASE_TEMPLATE("new X and Y of the same leading dimension are the ones read and written", Index, int32_t,
                   int64_t) {
  // A framework hands fresh tensors every call (same shape, new pointers):
  // the kept descriptors take the new pointers, and the preprocessed
  // workspace must not keep writing the first call's Y.
  Stream stream;
  const auto host = randomCsr<Index>(301, 200, 13, true);
  const DeviceCsr<Index> device(host);
  for (int algorithm : {1, 2}) {
    CAPTURE(algorithm);
    CusparseSpmm cached(device.view, device.values.data());
    const int64_t F = 16;
    Dense first(host.cols, host.rows, F, F, F, 400), second(host.cols, host.rows, F, F, F, 401);
    cached.multiply(first.x.data(), F, first.y.data(), F, F, algorithm, stream);
    stream.sync();
    checkProduct(host, first.hostX, F, first.y.download(), F, F, "first pointers");
    first.y.upload(std::vector<float>(first.y.size(), kPad));
    cached.multiply(second.x.data(), F, second.y.data(), F, F, algorithm, stream);
    stream.sync();
    checkProduct(host, second.hostX, F, second.y.download(), F, F, "second pointers");
    const std::vector<float> untouched = first.y.download();
    CHECK(std::all_of(untouched.begin(), untouched.end(), [](float v) { return v == kPad; }));
  }
}

TEST_CASE_TEMPLATE("algorithmName chooses before the first multiply", Index, int32_t, int64_t) {
  Stream stream;
  const auto host = randomCsr<Index>(40, 40, 11);
  const DeviceCsr<Index> device(host);
  CusparseSpmm cached(device.view, device.values.data());
  const std::string alg = cached.algorithmName(7, stream);
  CHECK((alg == "alg1" || alg == "alg2"));
  CHECK(cached.algorithmName(7, stream) == alg);

  Dense d(host.cols, host.rows, 7, 9, 8, 5);
  cached.multiply(d.x.data(), d.ldx, d.y.data(), d.ldy, 7, stream);
  stream.sync();
  checkProduct(host, d.hostX, d.ldx, d.y.download(), d.ldy, 7, "after algorithmName");
  CHECK(cached.algorithmName(7, stream) == alg);
}

TEST_CASE_TEMPLATE("an empty matrix writes zeros and calls no cuSPARSE routine", Index, int32_t, int64_t) {
  Stream stream;
  HostCsr<Index> noEntries;
  noEntries.rows = 6;
  noEntries.cols = 4;
  noEntries.offsets.assign(7, 0);
  HostCsr<Index> noRows;
  noRows.cols = 4;

  for (const HostCsr<Index> *host : {&noEntries, &noRows}) {
    const DeviceCsr<Index> device(*host);
    CusparseSpmm cached(device.view, device.values.data());
    CHECK(cached.algorithmName(3, stream) == "none");
    for (bool uncached : {false, true}) {
      Dense d(host->cols, host->rows, 3, 3, 5, 9);
      if (uncached)
        exec::cusparseSpmmUncached(device.view, device.values.data(), d.x.data(), d.ldx, d.y.data(), d.ldy, 3,
                                   stream);
      else
        cached.multiply(d.x.data(), d.ldx, d.y.data(), d.ldy, 3, stream);
      stream.sync();
      checkProduct(*host, d.hostX, d.ldx, d.y.download(), d.ldy, 3, uncached ? "uncached" : "cached");
    }
    CHECK(cached.workspaceBytes() == 0);
  }
}

TEST_CASE("a leading dimension below F, F below 1, or CSR ALG3 (not used) is the user's error") {
  Stream stream;
  const auto host = randomCsr<int32_t>(10, 8, 3);
  const DeviceCsr<int32_t> device(host);
  CusparseSpmm cached(device.view, device.values.data());
  Dense d(host.cols, host.rows, 4, 4, 4, 1);
  CHECK_THROWS_AS(cached.multiply(d.x.data(), 3, d.y.data(), 4, 4, stream), UserError);
  CHECK_THROWS_AS(cached.multiply(d.x.data(), 4, d.y.data(), 3, 4, stream), UserError);
  CHECK_THROWS_AS(cached.multiply(d.x.data(), 4, d.y.data(), 4, 0, stream), UserError);
  CHECK_THROWS_WITH_AS(cached.multiply(d.x.data(), 4, d.y.data(), 4, 4, 3, stream),
                       doctest::Contains("CSR ALG3 is not used"), UserError);
  CHECK_THROWS_WITH_AS(cached.multiply(d.x.data(), 4, d.y.data(), 4, 4, 7, stream),
                       doctest::Contains("CSR algorithm 7 (1 or 2"), UserError);
  CHECK_THROWS_AS(cached.algorithmName(0, stream), UserError);
  CHECK_THROWS_AS(
      exec::cusparseSpmmUncached(device.view, device.values.data(), d.x.data(), 3, d.y.data(), 4, 4, stream),
      UserError);
  CHECK_THROWS_WITH_AS(cached.multiply(d.x.data(), 2, d.y.data(), 4, 4, stream),
                       doctest::Contains("ldx >= F"), UserError);
}

} // namespace
} // namespace gnnjit::test
