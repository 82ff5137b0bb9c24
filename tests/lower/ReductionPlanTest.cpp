// Planning and code generation of the reduction family without a GPU: what
// each pass runs, what the forward saves for the backward, the entries of
// heavy rows, deterministic source, and that NVRTC compiles every module of
// every reduction layer for sm_90.
#include "autotune/Rule.h"
#include "codegen/Program.h"
#include "lower/Pipeline.h"
#include "runtime/KernelCache.h"

#include "exec/ReductionTestLayers.h"
#include "CompileModules.h"
#include "TestData.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace gnnjit;
using namespace gnnjit::autotune;
using namespace gnnjit::exec;
using codegen::Program;
using codegen::planProgram;
using lower::Pass;

namespace {

struct Shape {
  lower::IndexWidth index = lower::IndexWidth::I32;
  bool weighted = false, aligned = true, local = false;
  int64_t maxDegree = 10, medianDegree = 8;
  bool argScatter = true;
  bool packedMerge = true;
};

Program plan(const dsl::Layer &layer, Pass pass, const Shape &shape = {}) {
  const GraphFacts facts =
      assumedFacts(shape.medianDegree, shape.maxDegree, shape.index, shape.weighted, shape.local);
  const lower::LoweredLayer lowered = lower::lowerLayer(layer);
  RuleOptions rule{Variant::Auto, shape.aligned};
  rule.argScatter = shape.argScatter;
  rule.packedMerge = shape.packedMerge;
  return planProgram(lowered, pass, ruleConfig(lowered, pass, facts, rule));
}

template <typename T> std::vector<const T *> stepsOf(const Program &p) {
  std::vector<const T *> out;
  for (const lower::Step &s : p.plan.steps)
    if (const T *t = std::get_if<T>(&s))
      out.push_back(t);
  return out;
}

dsl::Layer library(const std::string &name, const std::string &aggregation, int64_t dim) {
  layers::LayerOptions o;
  o.dim = dim;
  o.aggregation = aggregation;
  return layers::buildLayer(name, o);
}

bool has(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

} // namespace

TEST_CASE("SAGE max: the forward saves arg positions, the backward reads them over the transpose") {
  const Program fwd = plan(library("sage", "max", 64), Pass::Forward);
  const auto reductions = stepsOf<lower::ReductionStep>(fwd);
  REQUIRE(reductions.size() == 1);
  CHECK(reductions[0]->target == "out");
  CHECK(reductions[0]->savedArgs == "args0");
  CHECK(reductions[0]->config.vec == 4); // x_j is a plain gather
  REQUIRE(fwd.plan.saved.size() == 1);
  CHECK(fwd.plan.saved[0].name == "args0");
  CHECK(fwd.plan.saved[0].width == 64);
  CHECK(fwd.plan.saved[0].positions);
  CHECK(has(fwd.code.modules[0].source, "#include \"gnnjit/reduction.cuh\""));
  CHECK(has(fwd.code.modules[0].source, "constexpr int REDUCE = gnnjit::device::kReduceMax;"));
  CHECK_FALSE(has(fwd.code.modules[0].source, "atomic"));

  // By default the backward scatters each result's gradient to its arg edge.
  const Program scatter = plan(library("sage", "max", 64), Pass::Backward);
  const auto scatters = stepsOf<lower::ArgScatterStep>(scatter);
  REQUIRE(scatters.size() == 1);
  CHECK(scatters[0]->savedArgs == "args0");
  CHECK(scatters[0]->target == "x");
  CHECK(scatters[0]->rest != nullptr); // d_out_i
  CHECK(has(scatter.code.modules[0].source, "gnnjit::device::argScatterAdd<F>"));
  CHECK(has(scatter.describe(), "arg scatter"));

  // Or walks the transpose and tests every edge.
  Shape transpose;
  transpose.argScatter = false;
  const Program bwd = plan(library("sage", "max", 64), Pass::Backward, transpose);
  const auto back = stepsOf<lower::ReductionStep>(bwd);
  REQUIRE(back.size() == 1);
  CHECK(back[0]->direction == lower::Direction::Out);
  CHECK(back[0]->target == "x");
  CHECK(back[0]->savedArgs.empty());
  REQUIRE(bwd.plan.saved.size() == 1); // it reads what the forward saved
  CHECK(has(bwd.code.modules[0].source, "saved_args0"));
  CHECK(has(bwd.code.modules[0].source, "peer_positions[p]")); // arg positions are incoming-CSR positions
  CHECK_FALSE(has(bwd.code.modules[0].source, "atomic"));
}

TEST_CASE("EdgeConv max: gradients to both ends, no saved values for sum and mean") {
  const Program bwd = plan(library("edgeconv", "max", 16), Pass::Backward);
  const auto steps = stepsOf<lower::ReductionStep>(bwd);
  REQUIRE(steps.size() == 1);
  CHECK(steps[0]->direction == lower::Direction::In);
  CHECK(steps[0]->target == "a");
  REQUIRE(stepsOf<lower::ArgScatterStep>(bwd).size() == 1);
  CHECK(stepsOf<lower::ArgScatterStep>(bwd)[0]->target == "b");
  for (const char *aggregation : {"mean", "sum"}) {
    CAPTURE(aggregation);
    const Program f = plan(library("edgeconv", aggregation, 16), Pass::Forward);
    CHECK(f.plan.saved.empty());
    REQUIRE(stepsOf<lower::ReductionStep>(f).size() == 1);
    CHECK(stepsOf<lower::ReductionStep>(f)[0]->savedArgs.empty());
  }
}

TEST_CASE("user layers: per-edge gradients, parameter sums over all edges, fused epilogues") {
  const Program gate = plan(test::edgeGate(8), Pass::Backward);
  REQUIRE(stepsOf<lower::EdgeOutputsStep>(gate).size() == 1);
  CHECK(stepsOf<lower::EdgeOutputsStep>(gate)[0]->outputs[0].first == "e");
  CHECK(gate.plan.target("e").perEdge);
  CHECK(has(gate.describe(), "edge outputs"));

  const Program affine = plan(test::edgeAffine(8), Pass::Backward);
  REQUIRE(stepsOf<lower::EdgeSumStep>(affine).size() == 1);
  CHECK(affine.plan.target("w").global);

  const Program gated = plan(test::gatedDifference(2, 4), Pass::Forward);
  const auto steps = stepsOf<lower::ReductionStep>(gated);
  REQUIRE(steps.size() == 1);
  CHECK(steps[0]->target == "out"); // the bias fused into the store
  CHECK(steps[0]->fusedOutput != nullptr);
  CHECK(steps[0]->config.vec == 1); // a general message: element by element
}

TEST_CASE("heavy rows of a reduction get segment and combine entries") {
  Shape hubs;
  hubs.maxDegree = 5000;
  hubs.packedMerge = false;
  const Program p = plan(library("sage", "max", 32), Pass::Forward, hubs);
  REQUIRE(p.code.modules.size() == 1);
  std::vector<std::string> entries;
  for (const auto &k : p.code.modules[0].kernels)
    entries.push_back(k.entry);
  CHECK(entries == std::vector<std::string>{"gnnjit_sage_fwd_agg0_rows", "gnnjit_sage_fwd_agg0_segments",
                                            "gnnjit_sage_fwd_agg0_combine"});
  CHECK(has(p.code.modules[0].source, "gnnjit::device::reduceCombine<"));
}

TEST_CASE("a packed merge of heavy rows is planned for max and min only") {
  Shape packed;
  packed.maxDegree = 5000;
  packed.packedMerge = true;
  for (const char *aggregation : {"max", "min"}) {
    CAPTURE(aggregation);
    const Program p = plan(library("sage", aggregation, 32), Pass::Forward, packed);
    const auto steps = stepsOf<lower::ReductionStep>(p);
    REQUIRE(steps.size() == 1);
    CHECK(steps[0]->config.packedMerge);
    REQUIRE(p.code.modules.size() == 1);
    REQUIRE(p.code.modules[0].kernels.size() == 3);
    const std::string &source = p.code.modules[0].source;
    CHECK(has(source, "gnnjit::device::reduceSegmentsPacked<"));
    CHECK(has(source, "gnnjit::device::reduceCombinePacked<"));
    CHECK(!has(source, "gnnjit::device::reduceCombine<"));
  }
  // Sums and means keep the second pass: packed atomics carry one winner, not a sum.
  for (const char *aggregation : {"mean", "sum"}) {
    CAPTURE(aggregation);
    const Program p = plan(library("edgeconv", aggregation, 32), Pass::Forward, packed);
    for (const lower::ReductionStep *s : stepsOf<lower::ReductionStep>(p))
      CHECK(!s->config.packedMerge);
  }
}

TEST_CASE("reduction sources are byte-identical for the same layer and config") {
  for (const test::ReductionLayerCase &c : test::reductionLayerCases()) {
    CAPTURE(c.label);
    for (Pass pass : {Pass::Forward, Pass::Backward}) {
      const Program a = plan(c.build(12), pass), b = plan(c.build(12), pass);
      REQUIRE(a.code.modules.size() == b.code.modules.size());
      for (size_t m = 0; m < a.code.modules.size(); ++m)
        CHECK(a.code.modules[m].source == b.code.modules[m].source);
    }
  }
}

TEST_CASE("NVRTC compiles every module of every reduction layer for sm_90") {
  test::TempDir dir;
  runtime::KernelCache cache(runtime::KernelCacheConfig{dir.path(), "reduction-test"});
  Shape heavy64;
  heavy64.index = lower::IndexWidth::I64;
  heavy64.maxDegree = 1000;
  heavy64.weighted = true;
  Shape unaligned;
  unaligned.aligned = false;
  Shape mesh;
  mesh.local = true;
  mesh.medianDegree = 4;
  mesh.maxDegree = 300;
  struct Variation {
    int64_t dim;
    Shape shape;
  };
  Shape transposed;
  transposed.argScatter = false;
  Shape secondPass64 = heavy64;
  secondPass64.packedMerge = false;
  Shape heavyUnaligned = unaligned;
  heavyUnaligned.maxDegree = 1000;
  const std::vector<Variation> variations = {{130, heavy64}, {3, unaligned},  {128, {}},
                                             {1, {}},        {64, mesh},      {33, transposed},
                                             {130, secondPass64}, {5, heavyUnaligned}};
  int compiled = 0;
  for (const Variation &v : variations)
    for (const test::ReductionLayerCase &c : test::reductionLayerCases())
      for (Pass pass : {Pass::Forward, Pass::Backward}) {
        CAPTURE(c.label);
        CAPTURE(v.dim);
        compiled += test::compileModules(cache, plan(c.build(v.dim), pass, v.shape));
      }
  MESSAGE(compiled << " modules compiled");
  CHECK(compiled > 100);
}
