// The device helpers (codegen/device/*.cuh) run on a real GPU and agree with
// the CPU: group reductions, vector loads and stores of f32/f16/bf16 rows,
// packed arg-max/arg-min atomics and the online softmax. The kernels live in
// DeviceHelperKernels.h (test_codegen_device_sources compiles them without a
// GPU). Skipped, saying so, without a device.
#include "DeviceHelperKernels.h"

#include "runtime/CudaCheck.h"
#include "runtime/Device.h"
#include "runtime/DeviceBuffer.h"
#include "runtime/KernelCache.h"
#include "runtime/RuntimeTestSupport.h"

#include "TestData.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace gnnjit::test {
namespace {

const ScratchTempRoot scratch;

using runtime::DeviceBuffer;
using runtime::Kernel;

constexpr float kInf = std::numeric_limits<float>::infinity();

/// A kernel cache in a fresh folder, compiling for the current device.
class Kernels {
public:
  explicit Kernels(const DeviceHelperKernel &kernels)
      : cache_(runtime::KernelCacheConfig{dir_.path(), "device-helpers-gpu-test"}), source_(kernels.source) {
    options_.arch = runtime::targetArch();
  }
  Kernel operator[](const std::string &entry) { return cache_.kernel(source_, options_, entry); }

private:
  TempDir dir_;
  runtime::KernelCache cache_;
  runtime::Source source_;
  runtime::CompileOptions options_;
};

void synchronize() { GNNJIT_CUDA_CHECK(cudaDeviceSynchronize()); }

uint32_t bits(float x) { return std::bit_cast<uint32_t>(x); }

// ---------------------------------------------------------------- warp

TEST_CASE("group reductions agree with the CPU for every width") {
  Kernels kernels(warpKernels());
  const int block = 128, blocks = 4, n = block * blocks;
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> real(-100.0f, 100.0f);
  std::uniform_int_distribution<int> integer(-1000, 1000);
  std::vector<float> in(n);
  std::vector<int> ints(n);
  for (int i = 0; i < n; ++i) {
    in[i] = real(rng);
    ints[i] = integer(rng);
  }
  const auto dIn = DeviceBuffer<float>::fromHost(in);
  const auto dInts = DeviceBuffer<int>::fromHost(ints);

  for (int width : {1, 2, 4, 8, 16, 32}) {
    CAPTURE(width);
    DeviceBuffer<float> sums(n), maxs(n), mins(n), last(n);
    DeviceBuffer<int> intSums(n), lanes(n), groups(n);
    kernels[fmt::format("warp_w{}", width)](dim3(blocks), dim3(block), 0, nullptr, dIn.data(), dInts.data(),
                                            sums.data(), maxs.data(), mins.data(), last.data(), intSums.data(),
                                            lanes.data(), groups.data());
    synchronize();
    const auto hSums = sums.download(), hMaxs = maxs.download(), hMins = mins.download(), hLast = last.download();
    const auto hIntSums = intSums.download(), hLanes = lanes.download(), hGroups = groups.download();

    int wrong = 0;
    for (int g = 0; g < n / width; ++g) {
      const int first = g * width;
      double sum = 0, magnitude = 0;
      float max = -kInf, min = kInf;
      long intSum = 0;
      for (int i = first; i < first + width; ++i) {
        sum += in[i];
        magnitude += std::fabs(in[i]);
        max = std::max(max, in[i]);
        min = std::min(min, in[i]);
        intSum += ints[i];
      }
      for (int i = first; i < first + width; ++i) {
        CAPTURE(i);
        // Every lane of the group holds the same bits.
        if (bits(hSums[i]) != bits(hSums[first]) || hMaxs[i] != hMaxs[first] || hMins[i] != hMins[first]) {
          ++wrong;
          FAIL_CHECK("lanes of one group disagree");
        }
        if (!(std::fabs(hSums[i] - sum) <= 1e-5 * std::max(magnitude, 1e-30))) {
          ++wrong;
          FAIL_CHECK(fmt::format("groupSum {} vs CPU {}", hSums[i], sum));
        }
        if (hMaxs[i] != max || hMins[i] != min || hLast[i] != in[first + width - 1] || hIntSums[i] != intSum) {
          ++wrong;
          FAIL_CHECK(fmt::format("max {} (CPU {}), min {} (CPU {}), broadcast {} (CPU {}), int sum {} (CPU {})",
                                 hMaxs[i], max, hMins[i], min, hLast[i], in[first + width - 1], hIntSums[i],
                                 intSum));
        }
        const int threadInBlock = i % block;
        if (hLanes[i] != threadInBlock % width || hGroups[i] != threadInBlock / width) {
          ++wrong;
          FAIL_CHECK(fmt::format("groupLane {} groupInBlock {}", hLanes[i], hGroups[i]));
        }
        if (wrong > 10)
          return;
      }
    }
    CHECK(wrong == 0);
  }
}

// ---------------------------------------------------------------- vectors

/// How the host stores and converts each element type (bits, so a device
/// value can be compared bit for bit).
struct F32 {
  using Bits = uint32_t;
  static constexpr const char *kName = "f32";
  static constexpr int kVec = 4;
  static Bits fromFloat(float x) { return std::bit_cast<Bits>(x); }
  static float toFloat(Bits b) { return std::bit_cast<float>(b); }
  static constexpr Bits kSentinel = 0x7fc0dead; // a NaN no store produces here
};
struct F16 {
  using Bits = uint16_t;
  static constexpr const char *kName = "f16";
  static constexpr int kVec = 8;
  static Bits fromFloat(float x) {
    const __half_raw raw = __float2half_rn(x);
    return raw.x;
  }
  static float toFloat(Bits b) {
    __half_raw raw;
    raw.x = b;
    return __half2float(__half(raw));
  }
  static constexpr Bits kSentinel = 0x7dad; // a NaN
};
struct BF16 {
  using Bits = uint16_t;
  static constexpr const char *kName = "bf16";
  static constexpr int kVec = 8;
  static Bits fromFloat(float x) {
    const __nv_bfloat16_raw raw = __float2bfloat16_rn(x);
    return raw.x;
  }
  static float toFloat(Bits b) {
    __nv_bfloat16_raw raw;
    raw.x = b;
    return __bfloat162float(__nv_bfloat16(raw));
  }
  static constexpr Bits kSentinel = 0x7fad; // a NaN
};

/// Floats that exercise rounding to f16/bf16: ties to even, overflow,
/// subnormals, signed zeros, infinities.
std::vector<float> narrowingSpecials() {
  return {1.0f + 0x1p-11f,          // f16 tie: down to 1 (even)
          1.0f + 3 * 0x1p-11f,      // f16 tie: up to 1 + 2^-9 (even)
          1.0f + 0x1p-8f,           // bf16 tie: down to 1
          1.0f + 3 * 0x1p-8f,       // bf16 tie: up
          -0.0f,
          0.0f,
          70000.0f,                 // f16 overflow to inf
          65519.0f,                 // f16: rounds to 65504
          6.0e-8f,                  // f16 subnormal
          1e-9f,                    // f16 underflow to 0
          -3.0e38f,                 // bf16 finite, f16 -inf
          kInf,
          -kInf,
          3.14159265f,
          -2.71828183f,
          1e-40f};                  // f32 subnormal
}

template <typename E> void checkVectorRows(Kernels &kernels, int n) {
  using Bits = typename E::Bits;
  const std::string entry = fmt::format("vec_{}_{}", E::kName, n);
  Kernel kernel = kernels[entry];
  std::mt19937 rng(77 + n);
  std::uniform_real_distribution<float> real(-8.0f, 8.0f);
  std::uniform_int_distribution<int> exponent(-20, 20);
  const std::vector<float> specials = narrowingSpecials();
  const int pad = 16;

  for (int len : {1, 3, 7, 8, 130}) {
    for (int offset : {0, 1, 2}) {
      CAPTURE(entry);
      CAPTURE(len);
      CAPTURE(offset);
      const int total = offset + len + pad;
      // Stored input: random values as T, specials first (all finite or inf,
      // never NaN, so the round trip must be bit-exact).
      std::vector<Bits> in(total, E::kSentinel);
      std::vector<float> src(total, std::bit_cast<float>(0x7fc0beefu));
      for (int i = 0; i < len; ++i) {
        const float r = std::ldexp(real(rng), exponent(rng));
        in[offset + i] = E::fromFloat(i < static_cast<int>(specials.size()) ? specials[i] : real(rng));
        src[offset + i] = i < static_cast<int>(specials.size()) ? specials[i] : r;
      }
      const std::vector<Bits> sentinels(total, E::kSentinel);
      const std::vector<float> nanFloats(len + n + pad, std::bit_cast<float>(0x7fc0f00du));
      const auto dIn = DeviceBuffer<Bits>::fromHost(in);
      const auto dSrc = DeviceBuffer<float>::fromHost(src);
      auto dCopy = DeviceBuffer<Bits>::fromHost(sentinels);
      auto dNarrowed = DeviceBuffer<Bits>::fromHost(sentinels);
      auto dWidened = DeviceBuffer<float>::fromHost(nanFloats);
      auto dWidenedLdg = DeviceBuffer<float>::fromHost(nanFloats);
      kernel(dim3(1), dim3(32), 0, nullptr, dIn.data() + offset, dCopy.data() + offset, dWidened.data(),
             dWidenedLdg.data(), dSrc.data() + offset, dNarrowed.data() + offset, len);
      synchronize();
      const auto copy = dCopy.download(), narrowed = dNarrowed.download();
      const auto widened = dWidened.download(), widenedLdg = dWidenedLdg.download();

      int wrong = 0;
      auto expect = [&](bool ok, const std::string &what) {
        if (!ok && ++wrong <= 8)
          FAIL_CHECK(what);
      };
      const int padded = (len + n - 1) / n * n;
      for (int i = 0; i < len + n + pad; ++i) {
        const uint32_t want = i < len      ? bits(E::toFloat(in[offset + i]))
                              : i < padded ? bits(0.0f)
                                           : 0x7fc0f00du; // past the last chunk: untouched
        expect(bits(widened[i]) == want, fmt::format("loadVec element {}: {} (bits {:#x}), want bits {:#x}", i,
                                                     widened[i], bits(widened[i]), want));
        expect(bits(widenedLdg[i]) == want, fmt::format("ldgVec element {}: {} (bits {:#x}), want bits {:#x}", i,
                                                        widenedLdg[i], bits(widenedLdg[i]), want));
      }
      for (int i = 0; i < total; ++i) {
        const bool inside = i >= offset && i < offset + len;
        const Bits wantCopy = inside ? in[i] : E::kSentinel;
        const Bits wantNarrowed = inside ? E::fromFloat(src[i]) : E::kSentinel;
        expect(copy[i] == wantCopy, fmt::format("storeVec round trip at {}: bits {:#x}, want {:#x}", i - offset,
                                                copy[i], wantCopy));
        expect(narrowed[i] == wantNarrowed,
               fmt::format("storeVec narrowing {} at {}: bits {:#x}, want {:#x}", inside ? src[i] : 0.0f,
                           i - offset, narrowed[i], wantNarrowed));
      }
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE_TEMPLATE("vector loads and stores match host conversion at any length and alignment", E, F32, F16, BF16) {
  Kernels kernels(vectorKernels());
  for (int n : {E::kVec, E::kVec / 2, E::kVec / 4})
    checkVectorRows<E>(kernels, n);
}

// ---------------------------------------------------------------- packed atomics

struct PackedCase {
  std::string name;
  std::vector<float> values;
  std::vector<int> indices;
};

/// Three-way order for arg-max (max) or arg-min (!max): +1 when `a` wins, 0
/// for a tie, -1 when `b` wins. NaN beats everything (it propagates, as in
/// PyTorch's scatter max/min); -0 ties +0.
int compareForMax(float a, float b, bool max) {
  const bool an = std::isnan(a), bn = std::isnan(b);
  if (an || bn)
    return an && bn ? 0 : (an ? 1 : -1);
  if (a == b)
    return 0;
  return (a > b) == max ? 1 : -1;
}

/// The winning position (ties: the lowest index), or -1 when empty.
int cpuWinner(const PackedCase &c, bool max) {
  int best = -1;
  for (size_t i = 0; i < c.values.size(); ++i) {
    if (best < 0) {
      best = static_cast<int>(i);
      continue;
    }
    const int order = compareForMax(c.values[i], c.values[best], max);
    if (order > 0 || (order == 0 && c.indices[i] < c.indices[best]))
      best = static_cast<int>(i);
  }
  return best;
}

std::vector<PackedCase> packedCases() {
  std::mt19937 rng(99);
  auto permutedIndices = [&](size_t n, int scale, int shift) {
    std::vector<int> idx(n);
    for (size_t i = 0; i < n; ++i)
      idx[i] = static_cast<int>(i) * scale + shift;
    std::shuffle(idx.begin(), idx.end(), rng);
    return idx;
  };
  auto pick = [&](const std::vector<float> &pool, size_t n) {
    std::uniform_int_distribution<size_t> which(0, pool.size() - 1);
    std::vector<float> out(n);
    for (float &v : out)
      v = pool[which(rng)];
    return out;
  };
  std::vector<PackedCase> cases;

  {
    const size_t n = 10000;
    cases.push_back({"ties among few values", pick({-3.0f, -1.0f, -0.0f, 0.0f, 1.0f, 2.5f}, n),
                     permutedIndices(n, 3, 5)});
  }
  {
    const size_t n = 4096;
    cases.push_back({"only signed zeros", pick({-0.0f, 0.0f}, n), permutedIndices(n, 1, 0)});
  }
  {
    const size_t n = 5000;
    std::uniform_real_distribution<float> real(-1000.0f, -1e-3f);
    std::vector<float> values(n);
    for (float &v : values)
      v = real(rng);
    cases.push_back({"negative values", values, permutedIndices(n, 1, 0)});
  }
  {
    const size_t n = 3000;
    std::uniform_real_distribution<float> real(-100.0f, 100.0f);
    std::vector<float> values(n);
    for (float &v : values)
      v = real(rng);
    for (size_t at : {17u, 500u, 2999u})
      values[at] = kInf;
    for (size_t at : {3u, 1200u, 2000u})
      values[at] = -kInf;
    cases.push_back({"infinities, tied", values, permutedIndices(n, 1, 0)});
  }
  {
    const size_t n = 3000;
    std::uniform_real_distribution<float> real(-100.0f, 100.0f);
    std::vector<float> values(n);
    for (float &v : values)
      v = real(rng);
    values[10] = kInf;
    values[11] = -kInf;
    values[700] = std::numeric_limits<float>::quiet_NaN();
    values[1500] = std::bit_cast<float>(0xffc00000u); // negative NaN
    values[2500] = std::bit_cast<float>(0x7f800001u); // signaling NaN payload
    cases.push_back({"NaN propagates", values, permutedIndices(n, 1, 0)});
  }
  {
    const size_t n = 2048;
    cases.push_back({"subnormals and zeros", pick({0.0f, -0.0f, 1e-45f, -1e-45f, 1e-40f, -1e-41f}, n),
                     permutedIndices(n, 1, 0)});
  }
  {
    const size_t n = 200000;
    std::uniform_int_distribution<int> small(0, 49);
    std::vector<float> values(n);
    for (float &v : values)
      v = static_cast<float>(small(rng));
    cases.push_back({"heavy contention, many ties", values, permutedIndices(n, 1, 0)});
  }
  cases.push_back({"extreme indices", {7.0f, 7.0f, 7.0f, 7.0f}, {INT_MAX, INT_MAX - 1, 0, 1 << 30}});
  cases.push_back({"one element", {-5.0f}, {12345}});
  return cases;
}

TEST_CASE("packed arg-max and arg-min atomics pick the winner and the lowest tied index") {
  Kernels kernels(packedKernels());
  DeviceBuffer<unsigned long long> slot(1);
  DeviceBuffer<float> value(1);
  DeviceBuffer<int> index(1);

  for (const PackedCase &c : packedCases()) {
    const int n = static_cast<int>(c.values.size());
    const auto dValues = DeviceBuffer<float>::fromHost(c.values);
    const auto dIndices = DeviceBuffer<int>::fromHost(c.indices);
    for (bool max : {true, false}) {
      for (const char *mode : {"each", "warp"}) {
        CAPTURE(c.name);
        CAPTURE(max);
        CAPTURE(mode);
        const std::string kind = max ? "max" : "min";
        // The empty state, as packed_atomic.cuh documents it.
        GNNJIT_CUDA_CHECK(cudaMemset(slot.data(), max ? 0x00 : 0xff, sizeof(unsigned long long)));
        const int blocks = std::clamp((n + 255) / 256, 1, 512);
        kernels[fmt::format("packed_{}_{}", kind, mode)](dim3(blocks), dim3(256), 0, nullptr, slot.data(),
                                                         dValues.data(), dIndices.data(), n);
        kernels[fmt::format("packed_{}_decode", kind)](dim3(1), dim3(1), 0, nullptr, slot.data(), value.data(),
                                                       index.data());
        synchronize();
        const float gotValue = value.download()[0];
        const int gotIndex = index.download()[0];
        const int winner = cpuWinner(c, max);
        REQUIRE(winner >= 0);
        const float wantValue = c.values[winner];
        CHECK(gotIndex == c.indices[winner]);
        if (std::isnan(wantValue)) {
          CHECK(std::isnan(gotValue));
        } else {
          CHECK(gotValue == wantValue);
          if (wantValue == 0.0f)
            CHECK_MESSAGE(!std::signbit(gotValue), "-0 is made +0 before packing");
          else
            CHECK(bits(gotValue) == bits(wantValue));
        }
      }
    }
  }

  // An untouched slot (no element) decodes to index -1.
  for (bool max : {true, false}) {
    CAPTURE(max);
    GNNJIT_CUDA_CHECK(cudaMemset(slot.data(), max ? 0x00 : 0xff, sizeof(unsigned long long)));
    kernels[max ? "packed_max_decode" : "packed_min_decode"](dim3(1), dim3(1), 0, nullptr, slot.data(),
                                                             value.data(), index.data());
    synchronize();
    CHECK(index.download()[0] == -1);
    MESSAGE(fmt::format("Packed{}::value(kEmpty) decodes to {}", max ? "Max" : "Min", value.download()[0]));
  }
}

// ---------------------------------------------------------------- online softmax

struct SoftmaxRow {
  std::string name;
  std::vector<float> scores;
};

std::vector<SoftmaxRow> softmaxRows() {
  std::mt19937 rng(2024);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::vector<SoftmaxRow> rows;
  auto make = [&](const std::string &name, int len, float lo, float hi, float maskedShare) {
    std::vector<float> s(len);
    for (float &v : s)
      v = unit(rng) < maskedShare ? -kInf : lo + (hi - lo) * unit(rng);
    rows.push_back({fmt::format("{} (length {})", name, len), s});
  };
  for (int len : {1, 5, 37, 1000}) {
    make("moderate scores, some masked", len, -5.0f, 5.0f, len == 1 ? 0.0f : 0.15f);
    make("large scores 80..90, some masked", len, 80.0f, 90.0f, len == 1 ? 0.0f : 0.15f);
    make("large negative scores", len, -90.0f, -80.0f, 0.0f);
    make("wide range", len, -1e4f, 1e4f, 0.0f);
  }
  {
    std::vector<float> s(37, 88.5f);
    s[0] = -kInf;
    s[36] = 89.5f;
    rows.push_back({"near-overflow scores, first masked", s});
  }
  {
    std::vector<float> s(40, -kInf);
    s[39] = 3.0f; // only the last lane's last element counts
    rows.push_back({"one unmasked element at the end", s});
  }
  rows.push_back({"all masked (length 7)", std::vector<float>(7, -kInf)});
  rows.push_back({"masked single element", {-kInf}});
  rows.push_back({"empty", {}});
  return rows;
}

TEST_CASE("online softmax states merged across a group match a double-precision softmax") {
  Kernels kernels(softmaxKernels());
  const std::vector<SoftmaxRow> rows = softmaxRows();
  std::vector<float> scores, values;
  std::vector<int> rowStart{0};
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  for (const SoftmaxRow &row : rows) {
    scores.insert(scores.end(), row.scores.begin(), row.scores.end());
    for (size_t i = 0; i < row.scores.size(); ++i)
      values.push_back(unit(rng));
    rowStart.push_back(static_cast<int>(scores.size()));
  }
  const int rowCount = static_cast<int>(rows.size());
  const auto dScores = DeviceBuffer<float>::fromHost(scores);
  const auto dValues = DeviceBuffer<float>::fromHost(values);
  const auto dRowStart = DeviceBuffer<int>::fromHost(rowStart);

  for (int width : {1, 4, 32}) {
    CAPTURE(width);
    const int threads = rowCount * width, block = 128;
    const size_t outputs = static_cast<size_t>(threads);
    DeviceBuffer<float> lse(outputs), inverse(outputs), maxOut(outputs), weighted(outputs);
    kernels[fmt::format("softmax_w{}", width)](dim3((threads + block - 1) / block), dim3(block), 0, nullptr,
                                              dScores.data(), dValues.data(), dRowStart.data(), rowCount,
                                              lse.data(), inverse.data(), maxOut.data(), weighted.data());
    synchronize();
    const auto hLse = lse.download(), hInverse = inverse.download(), hMax = maxOut.download(),
               hWeighted = weighted.download();

    for (int r = 0; r < rowCount; ++r) {
      CAPTURE(rows[r].name);
      const int begin = rowStart[r], end = rowStart[r + 1];
      double m = -std::numeric_limits<double>::infinity();
      for (int j = begin; j < end; ++j)
        m = std::max(m, static_cast<double>(scores[j]));
      double sum = 0, dot = 0, magnitude = 0;
      if (std::isfinite(m)) {
        for (int j = begin; j < end; ++j) {
          const double w = std::exp(static_cast<double>(scores[j]) - m);
          sum += w;
          dot += w * values[j];
          magnitude += w * std::fabs(values[j]);
        }
      }
      for (int lane = 0; lane < width; ++lane) {
        CAPTURE(lane);
        const int t = r * width + lane;
        if (sum == 0) {
          CHECK(hLse[t] == -kInf);
          CHECK(hInverse[t] == 0.0f);
          CHECK(hWeighted[t] == 0.0f);
          continue;
        }
        const double lseWant = m + std::log(sum), inverseWant = 1.0 / sum, weightedWant = dot / sum;
        CHECK(static_cast<double>(hMax[t]) == m);
        CHECK_MESSAGE(std::fabs(hLse[t] - lseWant) <= 1e-5 * std::max(1.0, std::fabs(lseWant)),
                      fmt::format("logSumExp {} vs CPU {}", hLse[t], lseWant));
        CHECK_MESSAGE(std::fabs(hInverse[t] - inverseWant) <= 1e-5 * inverseWant,
                      fmt::format("inverseSum {} vs CPU {}", hInverse[t], inverseWant));
        CHECK_MESSAGE(std::fabs(hWeighted[t] - weightedWant) <= 1e-5 * std::max(magnitude / sum, 1e-30),
                      fmt::format("weighted mean {} vs CPU {}", hWeighted[t], weightedWant));
      }
      // groupMerge says every lane gets the group's state: the same bits on
      // every lane, so lanes that normalize different feature columns agree.
      std::string disagreeing;
      for (int lane = 1; lane < width; ++lane) {
        const int t = r * width + lane, first = r * width;
        if (bits(hLse[t]) != bits(hLse[first]) || bits(hInverse[t]) != bits(hInverse[first]))
          disagreeing += fmt::format(" lane {}: inverseSum {:a}, lse {:a};", lane, hInverse[t], hLse[t]);
      }
      CHECK_MESSAGE(disagreeing.empty(), fmt::format("groupMerge<{}> lanes disagree with lane 0 (inverseSum {:a}, lse {:a}):{}",
                                                     width, hInverse[r * width], hLse[r * width], disagreeing));
    }
  }
}

} // namespace
} // namespace gnnjit::test
