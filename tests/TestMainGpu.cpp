// main() of GPU test programs: without a CUDA device the whole program is
// skipped, visibly (ctest lists it as Skipped through SKIP_RETURN_CODE),
// except in the GPU run (GNNJIT_REQUIRE_GPU=1), where that is a failure.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "runtime/Device.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

int main(int argc, char **argv) {
  if (!gnnjit::runtime::hasCudaDevice()) {
    const char *required = std::getenv("GNNJIT_REQUIRE_GPU");
    if (required && (std::string_view(required) == "1" || std::string_view(required) == "true")) {
      std::printf("FAILED: no CUDA device, and GNNJIT_REQUIRE_GPU is set: the GPU run must have one\n");
      return 1;
    }
    std::printf("SKIPPED: no CUDA device; these tests run on a machine with a GPU\n");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
