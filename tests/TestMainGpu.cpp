// main() of GPU test programs: without a CUDA device the whole program is
// skipped, visibly (ctest lists it as Skipped through SKIP_RETURN_CODE).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "runtime/Device.h"

#include <cstdio>

int main(int argc, char **argv) {
  if (!gnnjit::runtime::hasCudaDevice()) {
    std::printf("SKIPPED: no CUDA device; these tests run on a machine with a GPU\n");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
