#include "runtime/PhiloxUniform.h"

#include "support/Error.h"

#include <curand.h>
#include <fmt/format.h>

namespace gnnjit::runtime {

namespace {

/// A failed cuRAND call: the machine's fault when memory or the device ran
/// out, gnnjit's otherwise.
void curandCheck(curandStatus_t status, const char *call) {
  if (status == CURAND_STATUS_SUCCESS)
    return;
  const bool machine = status == CURAND_STATUS_ALLOCATION_FAILED || status == CURAND_STATUS_INITIALIZATION_FAILED ||
                       status == CURAND_STATUS_ARCH_MISMATCH;
  throw LibraryError(fmt::format("cuRAND call {} failed (curandStatus_t {})", call, static_cast<int>(status)),
                     machine ? LibraryError::Blame::Machine : LibraryError::Blame::Gnnjit);
}

#define GNNJIT_CURAND_CHECK(expr) curandCheck((expr), #expr)

/// A generator that is destroyed on every path out.
class Generator {
public:
  Generator(bool onHost, uint64_t seed) {
    GNNJIT_CURAND_CHECK(onHost ? curandCreateGeneratorHost(&g_, CURAND_RNG_PSEUDO_PHILOX4_32_10)
                               : curandCreateGenerator(&g_, CURAND_RNG_PSEUDO_PHILOX4_32_10));
    try {
      // Legacy ordering is the one whose results are fixed across GPUs and
      // releases; the host generator follows it too.
      GNNJIT_CURAND_CHECK(curandSetGeneratorOrdering(g_, CURAND_ORDERING_PSEUDO_LEGACY));
      GNNJIT_CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(g_, seed));
    } catch (...) {
      curandDestroyGenerator(g_);
      throw;
    }
  }
  ~Generator() { curandDestroyGenerator(g_); }
  Generator(const Generator &) = delete;
  Generator &operator=(const Generator &) = delete;
  curandGenerator_t get() const { return g_; }

private:
  curandGenerator_t g_ = nullptr;
};

} // namespace

void philoxUniformHost(float *out, size_t count, uint64_t seed, uint64_t offset) {
  if (count == 0)
    return;
  Generator g(/*onHost=*/true, seed);
  GNNJIT_CURAND_CHECK(curandSetGeneratorOffset(g.get(), offset));
  GNNJIT_CURAND_CHECK(curandGenerateUniform(g.get(), out, count));
}

void philoxUniformDevice(float *deviceOut, size_t count, uint64_t seed, cudaStream_t stream) {
  if (count == 0)
    return;
  Generator g(/*onHost=*/false, seed);
  GNNJIT_CURAND_CHECK(curandSetStream(g.get(), stream));
  GNNJIT_CURAND_CHECK(curandGenerateUniform(g.get(), deviceOut, count));
}

} // namespace gnnjit::runtime
