// The launcher's host arithmetic: the scale an arg scatter turns its
// contributions into integers with (the kernels compute the same on the
// device), and the heavy-row splits a plan launches over.
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

TEST_CASE("segmentKeysOf names the splits the steps launch over, and only those") {
  const auto tiling = [](int64_t threshold, int64_t length) {
    lower::RowTiling t;
    t.heavyThreshold = threshold;
    t.segmentLength = length;
    return t;
  };
  lower::PassPlan plan;
  lower::SpmmStep generated;
  static_cast<lower::RowTiling &>(generated.config) = tiling(64, 32);
  lower::SpmmStep cusparse = generated; // cuSPARSE splits nothing, whatever its tiling says
  cusparse.config.backend = lower::SpmmConfig::Backend::Cusparse;
  lower::ReductionStep unsplit, split;
  split.direction = lower::Direction::Out;
  static_cast<lower::RowTiling &>(split.config) = tiling(128, 64);
  lower::AttentionStep softmax, edgeSum, headSums;
  for (lower::AttentionStep *a : {&softmax, &edgeSum, &headSums})
    static_cast<lower::RowTiling &>(a->config) = tiling(256, 128);
  edgeSum.mode = lower::AttentionStep::Mode::EdgeSum; // over edge ranges
  headSums.mode = lower::AttentionStep::Mode::HeadSums;
  plan.steps = {generated, cusparse, unsplit, split, softmax, edgeSum, headSums};
  const std::vector<SegmentKey> want{{lower::Direction::In, 64, 32},
                                     {lower::Direction::Out, 128, 64},
                                     {lower::Direction::In, 256, 128}};
  CHECK(segmentKeysOf(plan) == want);
}
