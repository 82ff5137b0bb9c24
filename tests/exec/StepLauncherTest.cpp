// The launcher's host arithmetic: the scale an arg scatter turns its
// contributions into integers with (the kernels compute the same on the
// device).
#include "exec/StepLauncher.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace gnnjit;
using namespace gnnjit::exec;

TEST_CASE("the fixed-point scale keeps sums below 2^61 and is a power of two") {
  for (float largest : {1e-30f, 1e-3f, 1.0f, 3.5f, 1e20f})
    for (int64_t terms : {1, 2, 1000, 40000}) {
      const double scale = fixedPointScale(largest, terms);
      CHECK(double(largest) * double(terms) * scale < std::ldexp(1.0, 61));
      CHECK(double(largest) * double(terms) * scale >= std::ldexp(1.0, 59));
      int exponent = 0;
      CHECK(std::frexp(scale, &exponent) == 0.5);
    }
  CHECK(fixedPointScale(0.0f, 10) == 1.0);
}
