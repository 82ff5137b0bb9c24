#include "exec/CusparseSpmm.h"

#include "exec/CusparseCheck.h"
#include "runtime/CudaCheck.h"
#include "runtime/DeviceBuffer.h"
#include "runtime/EventTiming.h"
#include "support/Error.h"

#include <cusparse.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <mutex>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

namespace gnnjit::exec {

namespace {

constexpr float kOne = 1.0f, kZero = 0.0f;
constexpr cusparseOperation_t kNoTranspose = CUSPARSE_OPERATION_NON_TRANSPOSE;

// Owners of cuSPARSE objects. Destroying one only releases host state, and a
// destructor cannot report, so the status is dropped.
struct HandleDeleter {
  void operator()(cusparseHandle_t handle) const noexcept { (void)cusparseDestroy(handle); }
};
struct SpMatDeleter {
  void operator()(cusparseConstSpMatDescr_t matrix) const noexcept { (void)cusparseDestroySpMat(matrix); }
};
struct DnMatDeleter {
  void operator()(cusparseDnMatDescr_t matrix) const noexcept { (void)cusparseDestroyDnMat(matrix); }
};
using Handle = std::unique_ptr<std::remove_pointer_t<cusparseHandle_t>, HandleDeleter>;
using SpMat = std::unique_ptr<std::remove_pointer_t<cusparseConstSpMatDescr_t>, SpMatDeleter>;
using DnMat = std::unique_ptr<std::remove_pointer_t<cusparseDnMatDescr_t>, DnMatDeleter>;

const char *algName(cusparseSpMMAlg_t alg) {
  switch (alg) {
  case CUSPARSE_SPMM_CSR_ALG1:
    return "alg1";
  case CUSPARSE_SPMM_CSR_ALG2:
    return "alg2";
  default:
    return "default";
  }
}

// The cuSPARSE docs name CSR ALG1 (and ALG3, unused) as the algorithms
// preprocessing speeds up; for the others it has no effect.
bool usesPreprocess(cusparseSpMMAlg_t alg) { return alg == CUSPARSE_SPMM_CSR_ALG1; }

bool isEmpty(const DeviceCsrView &csr) { return csr.rows == 0 || csr.nnz == 0; }

void checkCsr(const DeviceCsrView &csr, const float *values) {
  if (csr.rows < 0 || csr.cols < 0 || csr.nnz < 0)
    throwUserError("cuSPARSE SpMM: a CSR of {} x {} with {} entries has a negative size", csr.rows, csr.cols, csr.nnz);
  if (!isEmpty(csr) && (!csr.offsets || !csr.indices || !values))
    throwUserError("cuSPARSE SpMM: a CSR with {} entries needs offsets, indices and values on the device", csr.nnz);
}

void checkDense(const DeviceCsrView &csr, const float *x, int64_t ldx, const float *y, int64_t ldy, int64_t F) {
  if (F < 1)
    throwUserError("cuSPARSE SpMM: F = {}; the dense matrices need at least one column", F);
  if (ldx < F)
    throwUserError("cuSPARSE SpMM: X has leading dimension {} but F = {} columns; a row-major X needs ldx >= F", ldx,
                   F);
  if (ldy < F)
    throwUserError("cuSPARSE SpMM: Y has leading dimension {} but F = {} columns; a row-major Y needs ldy >= F", ldy,
                   F);
  if ((csr.rows > 0 && !y) || (!isEmpty(csr) && !x))
    throwUserError("cuSPARSE SpMM: X or Y is a null pointer");
}

// Y's rows x F block becomes zero; the padding past F in each row is left alone.
void zeroRows(float *y, int64_t ldy, int64_t rows, int64_t F, cudaStream_t stream) {
  if (rows == 0)
    return;
  GNNJIT_CUDA_CHECK(cudaMemset2DAsync(y, static_cast<size_t>(ldy) * sizeof(float), 0,
                                      static_cast<size_t>(F) * sizeof(float), static_cast<size_t>(rows), stream));
}

Handle makeHandle() {
  cusparseHandle_t handle = nullptr;
  cusparseCheck(cusparseCreate(&handle), "cusparseCreate");
  return Handle(handle);
}

SpMat makeCsr(const DeviceCsrView &csr, const float *values) {
  const cusparseIndexType_t type = csr.index == graph::IndexType::Int32 ? CUSPARSE_INDEX_32I : CUSPARSE_INDEX_64I;
  cusparseConstSpMatDescr_t matrix = nullptr;
  cusparseCheck(cusparseCreateConstCsr(&matrix, csr.rows, csr.cols, csr.nnz, csr.offsets, csr.indices, values, type,
                                       type, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
                fmt::format("cusparseCreateConstCsr({} x {}, {} entries, {} indices)", csr.rows, csr.cols, csr.nnz,
                            graph::indexTypeName(csr.index)));
  return SpMat(matrix);
}

// X is only read, but only a non-const descriptor can take a new pointer in
// place (cusparseDnMatSetValues); cuSPARSE never writes matB.
DnMat makeDense(int64_t rows, int64_t F, int64_t ld, const float *data) {
  cusparseDnMatDescr_t matrix = nullptr;
  cusparseCheck(cusparseCreateDnMat(&matrix, rows, F, ld, const_cast<float *>(data), CUDA_R_32F, CUSPARSE_ORDER_ROW),
                fmt::format("cusparseCreateDnMat({} x {}, ld {})", rows, F, ld));
  return DnMat(matrix);
}

/// Everything kept for one F: the algorithm, its own descriptor of A (the
/// preprocessed buffer is tied to it), X and Y descriptors and the workspace.
struct Plan {
  cusparseSpMMAlg_t alg = CUSPARSE_SPMM_CSR_ALG1;
  int64_t F = 0;
  SpMat a;
  DnMat x, y;
  int64_t ldx = 0, ldy = 0;
  const float *xData = nullptr;
  float *yData = nullptr;
  runtime::DeviceMemory workspace; // freed first: cudaFree waits for the device
};

size_t bufferSize(cusparseHandle_t handle, const Plan &plan) {
  size_t bytes = 0;
  cusparseCheck(cusparseSpMM_bufferSize(handle, kNoTranspose, kNoTranspose, &kOne, plan.a.get(), plan.x.get(), &kZero,
                                        plan.y.get(), CUDA_R_32F, plan.alg, &bytes),
                fmt::format("cusparseSpMM_bufferSize({}, F={})", algName(plan.alg), plan.F));
  return bytes;
}

// A fresh workspace sized for the plan's current descriptors, preprocessed
// when the algorithm uses it. Preprocessing is valid for later calls with
// other X and Y (the docs allow matB and matC to change), so it is redone
// only with a new buffer.
void prepareWorkspace(cusparseHandle_t handle, Plan &plan) {
  plan.workspace = runtime::DeviceMemory(); // free the old buffer before taking a bigger one
  plan.workspace = runtime::DeviceMemory(bufferSize(handle, plan));
  if (usesPreprocess(plan.alg))
    cusparseCheck(cusparseSpMM_preprocess(handle, kNoTranspose, kNoTranspose, &kOne, plan.a.get(), plan.x.get(), &kZero,
                                          plan.y.get(), CUDA_R_32F, plan.alg, plan.workspace.data()),
                  fmt::format("cusparseSpMM_preprocess({}, F={})", algName(plan.alg), plan.F));
}

/// Points the plan's X and Y descriptors at x and y: a new pointer is set in
/// place, a new leading dimension (or a dropped descriptor) needs a new one.
/// Returns whether a descriptor was made (the workspace size may then differ).
bool bind(Plan &plan, const DeviceCsrView &csr, const float *x, int64_t ldx, float *y, int64_t ldy) {
  bool made = false;
  if (!plan.x || plan.ldx != ldx) {
    plan.x = makeDense(csr.cols, plan.F, ldx, x);
    plan.ldx = ldx;
    made = true;
  } else if (plan.xData != x) {
    cusparseCheck(cusparseDnMatSetValues(plan.x.get(), const_cast<float *>(x)), "cusparseDnMatSetValues(X)");
  }
  plan.xData = x;
  if (!plan.y || plan.ldy != ldy) {
    plan.y = makeDense(csr.rows, plan.F, ldy, y);
    plan.ldy = ldy;
    made = true;
  } else if (plan.yData != y) {
    cusparseCheck(cusparseDnMatSetValues(plan.y.get(), y), "cusparseDnMatSetValues(Y)");
  }
  plan.yData = y;
  return made;
}

void run(cusparseHandle_t handle, const Plan &plan) {
  cusparseCheck(cusparseSpMM(handle, kNoTranspose, kNoTranspose, &kOne, plan.a.get(), plan.x.get(), &kZero,
                             plan.y.get(), CUDA_R_32F, plan.alg, plan.workspace.data()),
                fmt::format("cusparseSpMM({}, F={})", algName(plan.alg), plan.F));
}

/// Median of three timed runs after one warm-up, in milliseconds, with the
/// timer every gnnjit measurement uses.
float timePlan(cusparseHandle_t handle, const Plan &plan, cudaStream_t stream) {
  return static_cast<float>(runtime::medianMs([&] { run(handle, plan); }, 1, 3, stream));
}

cusparseSpMMAlg_t csrAlgorithm(int number) {
  switch (number) {
  case 1:
    return CUSPARSE_SPMM_CSR_ALG1;
  case 2:
    return CUSPARSE_SPMM_CSR_ALG2;
  case 3:
    throwUserError("cuSPARSE SpMM: CSR ALG3 is not used; with CUDA 13.0 it leaves long rows unwritten and reads "
                   "outside its buffers on graphs with hubs (algorithm 1 or 2, or 0 to time them)");
  }
  throwUserError("cuSPARSE SpMM: CSR algorithm {} (1 or 2; 0 to time them)", number);
}

/// What a timed choice of algorithm depends on, coarsely: the device, the
/// index type, F, and the matrix's rows and entries to the nearest power of
/// two. A graph built per training step (a sampled subgraph, edges dropped at
/// random) is like the last one, and takes its algorithm without timing: no
/// timing runs, no synchronisation.
using ShapeClass = std::tuple<int, graph::IndexType, int64_t, int, int>;

ShapeClass shapeClassOf(const DeviceCsrView &csr, int64_t F) {
  int device = 0;
  GNNJIT_CUDA_CHECK(cudaGetDevice(&device));
  const auto log2 = [](int64_t n) { return static_cast<int>(std::bit_width(static_cast<uint64_t>(n))); };
  return {device, csr.index, F, log2(csr.rows), log2(csr.nnz)};
}

/// The algorithms timed so far, by shape class, for the whole process.
class TimedChoices {
public:
  std::optional<cusparseSpMMAlg_t> find(const ShapeClass &shape) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = chosen_.find(shape);
    return it == chosen_.end() ? std::nullopt : std::optional(it->second);
  }
  void record(const ShapeClass &shape, cusparseSpMMAlg_t alg) {
    std::lock_guard<std::mutex> lock(mutex_);
    chosen_.emplace(shape, alg);
  }

private:
  std::mutex mutex_;
  std::map<ShapeClass, cusparseSpMMAlg_t> chosen_;
};

TimedChoices &timedChoices() {
  static TimedChoices choices;
  return choices;
}

} // namespace

struct CusparseSpmm::State {
  DeviceCsrView csr;
  const float *values = nullptr;
  Handle handle; // declared before the plans, so it is destroyed after them
  /// Plans by F and the algorithm asked for (0: the faster, timed).
  std::map<std::pair<int64_t, int>, std::unique_ptr<Plan>> plans;

  /// Times each CSR algorithm on x and y (whose contents the runs overwrite
  /// with the product) and keeps the fastest.
  std::unique_ptr<Plan> tune(int64_t F, const float *x, int64_t ldx, float *y, int64_t ldy, cudaStream_t stream) {
    std::unique_ptr<Plan> best;
    float bestMs = std::numeric_limits<float>::infinity();
    std::string failures;
    for (cusparseSpMMAlg_t alg : {CUSPARSE_SPMM_CSR_ALG1, CUSPARSE_SPMM_CSR_ALG2}) {
      auto plan = std::make_unique<Plan>();
      plan->alg = alg;
      plan->F = F;
      // An algorithm cuSPARSE refuses for this matrix (say, NOT_SUPPORTED) or
      // whose workspace does not fit scores infinity; other CUDA errors are real.
      try {
        plan->a = makeCsr(csr, values);
        bind(*plan, csr, x, ldx, y, ldy);
        prepareWorkspace(handle.get(), *plan);
        const float ms = timePlan(handle.get(), *plan, stream);
        if (ms < bestMs) {
          bestMs = ms;
          best = std::move(plan);
        }
      } catch (const CusparseError &e) {
        failures += fmt::format("; {}: {}", algName(alg), e.what());
      } catch (const runtime::CudaError &e) {
        if (e.code() != cudaErrorMemoryAllocation)
          throw;
        failures += fmt::format("; {}: {}", algName(alg), e.what());
      }
    }
    if (!best)
      throwUserError("cuSPARSE SpMM: no CSR algorithm runs for a {} x {} matrix with {} entries and F = {}{}", csr.rows,
                     csr.cols, csr.nnz, F, failures);
    return best;
  }

  /// A plan with the algorithm timed fastest on a matrix of the same shape
  /// class (timedChoices), timing them only for the first of its class.
  std::unique_ptr<Plan> fastest(int64_t F, const float *x, int64_t ldx, float *y, int64_t ldy, cudaStream_t stream) {
    const ShapeClass shape = shapeClassOf(csr, F);
    if (std::optional<cusparseSpMMAlg_t> alg = timedChoices().find(shape))
      return fixed(F, *alg, x, ldx, y, ldy);
    std::unique_ptr<Plan> best = tune(F, x, ldx, y, ldy, stream);
    timedChoices().record(shape, best->alg);
    return best;
  }

  /// A plan for `algorithm` (1 or 2) as asked, without timing.
  std::unique_ptr<Plan> fixed(int64_t F, int algorithm, const float *x, int64_t ldx, float *y, int64_t ldy) {
    return fixed(F, csrAlgorithm(algorithm), x, ldx, y, ldy);
  }
  std::unique_ptr<Plan> fixed(int64_t F, cusparseSpMMAlg_t alg, const float *x, int64_t ldx, float *y, int64_t ldy) {
    auto plan = std::make_unique<Plan>();
    plan->alg = alg;
    plan->F = F;
    plan->a = makeCsr(csr, values);
    bind(*plan, csr, x, ldx, y, ldy);
    prepareWorkspace(handle.get(), *plan);
    return plan;
  }

  /// The plan for F bound to x and y, made (and timed, for algorithm 0) the
  /// first time.
  Plan &plan(int64_t F, const float *x, int64_t ldx, float *y, int64_t ldy, int algorithm, cudaStream_t stream) {
    const auto key = std::make_pair(F, algorithm);
    auto it = plans.find(key);
    if (it == plans.end())
      return *plans
                  .emplace(key, algorithm == 0 ? fastest(F, x, ldx, y, ldy, stream)
                                               : fixed(F, algorithm, x, ldx, y, ldy))
                  .first->second;
    Plan &found = *it->second;
    if (bind(found, csr, x, ldx, y, ldy))
      prepareWorkspace(handle.get(), found); // new descriptors: size and preprocess again
    return found;
  }
};

CusparseSpmm::CusparseSpmm(DeviceCsrView csr, const float *values) : state_(std::make_unique<State>()) {
  checkCsr(csr, values);
  state_->csr = csr;
  state_->values = values;
  state_->handle = makeHandle();
}

CusparseSpmm::~CusparseSpmm() = default;

void CusparseSpmm::multiply(const float *x, int64_t ldx, float *y, int64_t ldy, int64_t F, cudaStream_t stream) {
  multiply(x, ldx, y, ldy, F, 0, stream);
}

void CusparseSpmm::multiply(const float *x, int64_t ldx, float *y, int64_t ldy, int64_t F, int algorithm,
                            cudaStream_t stream) {
  State &s = *state_;
  checkDense(s.csr, x, ldx, y, ldy, F);
  if (isEmpty(s.csr)) {
    zeroRows(y, ldy, s.csr.rows, F, stream);
    return;
  }
  cusparseCheck(cusparseSetStream(s.handle.get(), stream), "cusparseSetStream");
  // After a first-time tuning y already holds the product; one more run keeps
  // this path simple and costs one SpMM per F.
  run(s.handle.get(), s.plan(F, x, ldx, y, ldy, algorithm, stream));
}

std::string CusparseSpmm::algorithmName(int64_t F, cudaStream_t stream) {
  State &s = *state_;
  if (F < 1)
    throwUserError("cuSPARSE SpMM: F = {}; the dense matrices need at least one column", F);
  if (isEmpty(s.csr))
    return "none";
  if (auto it = s.plans.find({F, 0}); it != s.plans.end())
    return algName(it->second->alg);
  cusparseCheck(cusparseSetStream(s.handle.get(), stream), "cusparseSetStream");
  // Scratch X and Y, dense with ld = F; X zeroed so the timed runs read no
  // uninitialised memory.
  runtime::DeviceMemory x(static_cast<size_t>(s.csr.cols) * static_cast<size_t>(F) * sizeof(float));
  runtime::DeviceMemory y(static_cast<size_t>(s.csr.rows) * static_cast<size_t>(F) * sizeof(float));
  x.fillZero(stream);
  Plan &plan = s.plan(F, static_cast<const float *>(x.data()), F, static_cast<float *>(y.data()), F, 0, stream);
  // Forget the scratch pointers: the next multiply makes fresh descriptors
  // (and checks the workspace still fits them).
  plan.x.reset();
  plan.y.reset();
  plan.xData = nullptr;
  plan.yData = nullptr;
  return algName(plan.alg);
}

size_t CusparseSpmm::workspaceBytes() const {
  size_t total = 0;
  for (const auto &entry : state_->plans)
    total += entry.second->workspace.bytes();
  return total;
}

void cusparseSpmmUncached(DeviceCsrView csr, const float *values, const float *x, int64_t ldx, float *y, int64_t ldy,
                          int64_t F, cudaStream_t stream) {
  checkCsr(csr, values);
  checkDense(csr, x, ldx, y, ldy, F);
  if (isEmpty(csr)) {
    zeroRows(y, ldy, csr.rows, F, stream);
    return;
  }
  Handle handle = makeHandle();
  cusparseCheck(cusparseSetStream(handle.get(), stream), "cusparseSetStream");
  Plan plan;
  plan.alg = CUSPARSE_SPMM_ALG_DEFAULT;
  plan.F = F;
  plan.a = makeCsr(csr, values);
  plan.x = makeDense(csr.cols, F, ldx, x);
  plan.y = makeDense(csr.rows, F, ldy, y);
  plan.workspace = runtime::DeviceMemory(bufferSize(handle.get(), plan));
  run(handle.get(), plan);
  // plan.workspace goes with cudaFree, which synchronises the device (CUDA
  // programming guide, stream-ordered allocator), so the product is finished
  // before the buffer is released; the descriptors and handle go after it.
}

} // namespace gnnjit::exec
