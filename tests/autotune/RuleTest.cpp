// The tuner's rule (autotune/Rule.h) alone: the SpMM backend and kernel
// shapes it picks from degree statistics, and its argument parsing.
#include "autotune/Rule.h"
#include "support/Error.h"

#include <doctest/doctest.h>

using namespace gnnjit;
using namespace gnnjit::autotune;

TEST_CASE("the Auto rule: cuSPARSE for skewed degrees unless it would need an extra pass; kernel shapes") {
  const RuleOptions automatic{Variant::Auto, true};
  SpmmInputs even;
  even.degrees = DegreeFacts{16.0, 4.0, 16, 40};
  even.width = 128;
  even.cusparsePossible = true;
  even.alignedGather = true;
  SpmmInputs skewed = even;
  skewed.degrees = DegreeFacts{16.0, 40.0, 6, 40000}; // R-MAT-like: std above the mean, hubs
  using Backend = lower::SpmmConfig::Backend;
  CHECK(chooseSpmm(even, automatic).backend == Backend::Generated);
  CHECK(chooseSpmm(skewed, automatic).backend == Backend::Cusparse);
  SpmmInputs hubsOnly = even; // std below the mean, but a row 16x longer than the mean
  hubsOnly.degrees.max = 16 * 16 + 1;
  CHECK(chooseSpmm(hubsOnly, automatic).backend == Backend::Cusparse);
  SpmmInputs fusedEpilogue = skewed; // GIN's self term: the generated kernel fuses it
  fusedEpilogue.cusparseNeedsPass = true;
  CHECK(chooseSpmm(fusedEpilogue, automatic).backend == Backend::Generated);
  SpmmInputs impossible = skewed; // a per-head weight cuSPARSE cannot take
  impossible.cusparsePossible = false;
  CHECK(chooseSpmm(impossible, automatic).backend == Backend::Generated);
  CHECK(chooseSpmm(even, {Variant::Cusparse, true}).backend == Backend::Cusparse);
  CHECK(chooseSpmm(skewed, {Variant::Generated, true}).backend == Backend::Generated);

  // Generated shapes: a warp per scattered row, small groups for local ones,
  // heavy rows split above max(128, 4 x median), or 8 x the group when local.
  const lower::SpmmConfig scattered = chooseSpmm(impossible, automatic);
  CHECK(scattered.group == 32);
  CHECK(scattered.vec == 4);
  CHECK(scattered.heavyThreshold == 128);
  SpmmInputs mesh = even;
  mesh.local = true;
  mesh.degrees = DegreeFacts{4.0, 0.5, 4, 6};
  const lower::SpmmConfig small = chooseSpmm(mesh, automatic);
  CHECK(small.group == 4);
  CHECK(small.chunks == 8);
  CHECK(small.heavyThreshold == 0); // no row above 8 x 4
  SpmmInputs odd = even;
  odd.width = 130;
  CHECK(chooseSpmm(odd, automatic).vec == 2);
  odd.alignedGather = false;
  CHECK(chooseSpmm(odd, automatic).vec == 1);
}


TEST_CASE("an unknown backend variant is refused, naming the choices") {
  CHECK_THROWS_WITH_AS(parseVariant("fast"), doctest::Contains("auto, generated or cusparse"), UserError);
}

TEST_CASE("a device-built graph's rule keeps to the generated kernels unless a variant was asked for") {
  CHECK(autotune::forDeviceBuiltGraph({}).variant == autotune::Variant::Generated);
  autotune::RuleOptions asked;
  asked.variant = autotune::Variant::Cusparse;
  asked.group = 8;
  const autotune::RuleOptions kept = autotune::forDeviceBuiltGraph(asked);
  CHECK(kept.variant == autotune::Variant::Cusparse);
  CHECK(kept.group == 8);
}
