// Planning and code generation of SpMM-family programs without a GPU: what
// each layer's passes run, the structure of the generated source, that it
// is deterministic, that NVRTC compiles every kernel for sm_90.
#include "autotune/Rule.h"
#include "codegen/Program.h"
#include "codegen/Provenance.h"
#include "lower/Pipeline.h"
#include "runtime/KernelCache.h"

#include "exec/SpmmTestLayers.h"
#include "CompileModules.h"
#include "TestData.h"

#include <doctest/doctest.h>

using namespace gnnjit;
using namespace gnnjit::autotune;
using namespace gnnjit::exec;
using codegen::Program;
using codegen::planProgram;
using lower::Pass;

namespace {

struct Shape {
  lower::IndexWidth index = lower::IndexWidth::I32;
  bool weighted = false, aligned = true;
  /// Degrees of a graph with rows of medianDegree edges up to maxDegree
  /// (mean = median, std 0): a consistent distribution the rule can read.
  int64_t maxDegree = 10, medianDegree = 8;
  bool local = false;
  Variant variant = Variant::Generated;
};

Program plan(const lower::LoweredLayer &lowered, Pass pass, const Shape &shape) {
  REQUIRE(shape.medianDegree <= shape.maxDegree);
  const GraphFacts facts =
      assumedFacts(shape.medianDegree, shape.maxDegree, shape.index, shape.weighted, shape.local);
  return planProgram(lowered, pass, ruleConfig(lowered, pass, facts, {shape.variant, shape.aligned}));
}

/// What a step is, as plan.json names it.
std::string kindOf(const lower::Step &step) {
  struct Kind {
    std::string operator()(const lower::SpmmStep &s) const { return s.cusparse() ? "cusparse" : "spmm"; }
    std::string operator()(const lower::ReductionStep &) const { return "reduction"; }
    std::string operator()(const lower::ArgScatterStep &) const { return "arg_scatter"; }
    std::string operator()(const lower::AttentionStep &) const { return "attention"; }
    std::string operator()(const lower::NodeSumStep &) const { return "node_sum"; }
    std::string operator()(const lower::EdgeSumStep &) const { return "edge_sum"; }
    std::string operator()(const lower::EdgeOutputsStep &) const { return "edge_outputs"; }
    std::string operator()(const lower::NodeOutputsStep &s) const { return s.global ? "global_outputs" : "node_outputs"; }
    std::string operator()(const lower::ZeroStep &) const { return "zero"; }
  };
  return std::visit(Kind{}, step);
}

const lower::SpmmStep &spmm(const Program &p, size_t k) { return std::get<lower::SpmmStep>(p.plan.steps.at(k)); }

lower::LoweredLayer lowered(const std::string &name, const layers::LayerOptions &options) {
  return lower::lowerLayer(layers::buildLayer(name, options));
}

bool has(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

} // namespace

TEST_CASE("GCN forward: one fused SpMM kernel, normalization from degrees, vector gathers") {
  layers::LayerOptions o;
  o.dim = 128;
  const Program p = plan(lowered("gcn", o), Pass::Forward, {});
  REQUIRE(p.plan.steps.size() == 1);
  CHECK(kindOf(p.plan.steps[0]) == "spmm");
  CHECK(spmm(p, 0).target == "out");
  CHECK(p.plan.scratch.empty()); // no scratch: the kernel writes the output
  REQUIRE(p.code.modules.size() == 1);
  const std::string &src = p.code.modules[0].source;
  CHECK(codegen::provenanceIntact(src));
  CHECK(has(src, "// layer:                 gcn\n"));
  CHECK(has(src, "constexpr int V = 4;"));
  // A warp per row, one chunk of 4-float vectors: the plan's config, and the
  // skeleton the module calls with it.
  CHECK(spmm(p, 0).config.group == 32);
  CHECK(spmm(p, 0).config.chunks == 1);
  CHECK(has(src, "gnnjit::device::spmmRows<32, V, 1, F>(ops, num_rows, row_offsets, col_indices, 0);"));
  CHECK(has(src, "constexpr int F = 128"));
  CHECK(has(src, "typedef int index_t;"));
  CHECK(has(src, "gnnjit::device::ldgVecAligned<float, V>(in_x + (long long)col * in_x_ld + f, x);"));
  CHECK(has(src, "#include \"gnnjit/spmm.cuh\"")); // the loop skeleton: shuffled index loads live there
  CHECK(has(src, "q_in_degree[col]")); // source factor per edge
  CHECK(has(src, "q_in_degree[row]")); // destination factor once per row
  CHECK(has(src, "(1.0f / sqrtf("));
  CHECK_FALSE(has(src, "atomic"));
  CHECK_FALSE(has(src, "_segments")); // no heavy rows at max degree 10
}

TEST_CASE("GCN backward is an SpMM over out-edges (the transpose), no atomics") {
  layers::LayerOptions o;
  o.dim = 64;
  const Program p = plan(lowered("gcn", o), Pass::Backward, {});
  REQUIRE(p.plan.steps.size() == 1);
  CHECK(kindOf(p.plan.steps[0]) == "spmm");
  CHECK(spmm(p, 0).target == "x");
  CHECK(spmm(p, 0).stage.aggregate->operands().size() == 1);
  const std::string &src = p.code.modules[0].source;
  CHECK(has(src, "in_d_out + (long long)col * in_d_out_ld"));
  CHECK_FALSE(has(src, "atomic"));
}

TEST_CASE("GIN: the self term fused into the SpMM epilogue; eps's gradient a deterministic node sum") {
  layers::LayerOptions o;
  o.dim = 16;
  o.trainEps = true;
  const lower::LoweredLayer l = lowered("gin", o);
  const Program fwd = plan(l, Pass::Forward, {});
  REQUIRE(fwd.plan.steps.size() == 1);
  CHECK(spmm(fwd, 0).target == "out");
  CHECK(has(fwd.code.modules[0].source, "in_x[(long long)(row) * in_x_ld"));
  CHECK(has(fwd.code.modules[0].source, "in_eps[(0) * 1 + (0)]"));
  const Program bwd = plan(l, Pass::Backward, {});
  std::vector<std::string> kinds;
  for (const lower::Step &s : bwd.plan.steps)
    kinds.push_back(kindOf(s));
  CHECK(kinds == std::vector<std::string>{"spmm", "node_sum", "global_outputs"});
  CHECK(spmm(bwd, 0).target == "x");
  CHECK(bwd.describe().find("node sum aggregate[sum, all_nodes] [1, 1]") != std::string::npos);
}

TEST_CASE("heavy rows get segment and combine entry points; odd widths fall back to scalar loads") {
  layers::LayerOptions o;
  o.dim = 130;
  Shape shape;
  shape.maxDegree = 5000;
  const Program p = plan(lowered("sage", o), Pass::Forward, shape);
  REQUIRE(p.code.modules.size() == 1);
  std::vector<std::string> entries;
  for (const auto &k : p.code.modules[0].kernels)
    entries.push_back(k.entry);
  CHECK(entries == std::vector<std::string>{"gnnjit_sage_fwd_agg0_rows", "gnnjit_sage_fwd_agg0_segments",
                                            "gnnjit_sage_fwd_agg0_combine"});
  const std::string &src = p.code.modules[0].source;
  CHECK(spmm(p, 0).config.heavyThreshold == 128);
  CHECK(spmm(p, 0).config.segmentLength == 256);
  // Both are launch parameters, not constants of the source.
  CHECK(has(src, "spmmRows<32, V, 3, F>(ops, num_rows, row_offsets, col_indices, heavy_threshold);"));
  CHECK(has(src, ", partials, segment_length);"));
  CHECK(!has(src, "HEAVY"));
  CHECK(has(src, "V = 2"));                        // 130 is even, not a multiple of 4
  CHECK(has(src, "scale / (float)(end - begin)")); // mean
  CHECK(has(src, "gnnjit::device::spmmSegments<"));
  CHECK(has(src, "gnnjit::device::spmmCombine<")); // partial sums added in segment order
}

TEST_CASE("short rows get small groups, long rows full warps in segments") {
  layers::LayerOptions o;
  o.dim = 128;
  Shape shape;
  shape.medianDegree = 4; // a road-like grid
  shape.maxDegree = 4;
  shape.local = true;
  const Program grid = plan(lowered("gcn", o), Pass::Forward, shape);
  CHECK(spmm(grid, 0).config.group == 4);
  CHECK(spmm(grid, 0).config.chunks == 8);
  CHECK(has(grid.code.modules[0].source, "spmmRows<4, V, 8, F>"));
  CHECK(grid.code.modules[0].kernels.size() == 1);
  shape.maxDegree = 40000; // a power-law graph with hubs and scattered ids
  shape.local = false;
  const Program hubs = plan(lowered("gcn", o), Pass::Forward, shape);
  CHECK(has(hubs.code.modules[0].source, "long long heavy_threshold"));
  CHECK(spmm(hubs, 0).config.print() ==
        "group=32 vec=4 chunks=1 block=256 heavy>128 in segments of 256 by 32 lanes x 1 chunks");
  shape.local = true; // the same degrees on a mesh: small groups, full warps for the long rows
  const Program mesh = plan(lowered("gcn", o), Pass::Forward, shape);
  CHECK(spmm(mesh, 0).config.heavyThreshold == 32);
  CHECK(spmm(mesh, 0).config.segmentLength == 256);
  CHECK(spmm(mesh, 0).config.segmentGroup == 32); // segments by full warps
  CHECK(spmm(mesh, 0).config.segmentChunks == 1);
  CHECK(has(mesh.code.modules[0].source, "spmmSegments<32, V, 1, F>"));
}

TEST_CASE("configs that differ only in the heavy-row threshold and segment length share their module source") {
  // (What the autotuner relies on to compile one module for the 9 such
  // candidates of a tiling: the kernel cache keys modules by source.)
  for (const char *name : {"gcn", "sage", "gatv2"}) {
    layers::LayerOptions o;
    o.dim = 32;
    if (std::string(name) == "sage")
      o.aggregation = "max";
    if (std::string(name) == "gatv2")
      o.heads = 4;
    const lower::LoweredLayer l = lowered(name, o);
    GraphFacts facts;
    facts.in = facts.out = DegreeFacts{16.0, 0.0, 16, 40000};
    for (Pass pass : {Pass::Forward, Pass::Backward}) {
      INFO(name << (pass == Pass::Forward ? " forward" : " backward"));
      lower::PassConfig a = ruleConfig(l, pass, facts, {Variant::Generated, true});
      lower::PassConfig b = a;
      bool tiled = false;
      for (lower::StageConfig &c : b.stages)
        std::visit(
            [&](auto &config) {
              if constexpr (requires { config.heavyThreshold; }) {
                if (config.heavyThreshold > 0) {
                  config.heavyThreshold = 2 * config.heavyThreshold;
                  config.segmentLength = 4 * config.segmentLength;
                  tiled = true;
                }
              }
            },
            c);
      REQUIRE(tiled);
      const Program pa = planProgram(l, pass, a), pb = planProgram(l, pass, b);
      REQUIRE(pa.code.modules.size() == pb.code.modules.size());
      for (size_t m = 0; m < pa.code.modules.size(); ++m)
        CHECK(pa.code.modules[m].source == pb.code.modules[m].source);
    }
  }
}

TEST_CASE("the same layer and config give byte-identical source") {
  for (const test::SpmmLayerCase &c : test::spmmLayerCases(33)) {
    CAPTURE(c.label);
    const Program a = plan(lowered(c.layer, c.options), Pass::Backward, {});
    const Program b = plan(lowered(c.layer, c.options), Pass::Backward, {});
    REQUIRE(a.code.modules.size() == b.code.modules.size());
    for (size_t m = 0; m < a.code.modules.size(); ++m)
      CHECK(a.code.modules[m].source == b.code.modules[m].source);
  }
}

TEST_CASE("NVRTC compiles every generated kernel of every SpMM layer for sm_90") {
  test::TempDir dir;
  runtime::KernelCache cache(runtime::KernelCacheConfig{dir.path(), "program-test"});
  int compiled = 0;
  struct Variation {
    int64_t dim;
    Shape shape;
  };
  Shape heavy64;
  heavy64.index = lower::IndexWidth::I64;
  heavy64.maxDegree = 1000;
  heavy64.weighted = true;
  Shape unaligned;
  unaligned.aligned = false;
  Shape cusparse;
  cusparse.variant = Variant::Cusparse;
  cusparse.weighted = true;
  const std::vector<Variation> variations = {{130, heavy64}, {3, unaligned}, {128, cusparse}, {130, cusparse}, {1, {}}};
  for (const Variation &v : variations)
    for (const test::SpmmLayerCase &c : test::spmmLayerCases(v.dim)) {
      CAPTURE(c.label);
      CAPTURE(v.dim);
      const lower::LoweredLayer l = lowered(c.layer, c.options);
      for (Pass pass : {Pass::Forward, Pass::Backward})
        compiled += test::compileModules(cache, plan(l, pass, v.shape));
    }
  MESSAGE(compiled << " modules compiled");
  CHECK(compiled > 60);
}
