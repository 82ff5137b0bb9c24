// Attention layers (GATv2, GAT, Graph Transformer) on the GPU, side by side in
// one process with the SpMM of the same graph and width (SAGE mean: how
// close attention gets to the memory wall). Forward and forward + backward,
// median of --reps after --warmup runs (CUDA events), peak device memory
// (the graph's device arrays included) against the inputs, outputs and
// gradients, alone and with the graph as one CSR, and the ratios the
// attention issue's goals name against ../shared/baselines' anchors.
#include "BenchSupport.h"

#include "exec/HostTransfer.h"
#include "autotune/PlanLayer.h"
#include "exec/LayerRunner.h"
#include "exec/RandomInputs.h"
#include "layers/Library.h"
#include "lower/Pipeline.h"
#include "ref/Bindings.h"
#include "runtime/Device.h"
#include "runtime/EventTiming.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>

using namespace gnnjit;
using runtime::medianMs;

namespace {

struct Options {
  std::vector<std::string> graphs = {"rmat:scale=20,ef=16,seed=0", "grid:side=1024", "er:n=100000,deg=100,seed=0",
                                     "tolokers", "squirrel"};
  std::vector<std::string> layers = {"gatv2", "gat", "transformer"};
  int64_t heads = 4, dim = 32;
  int reps = 10, warmup = 3;
  std::string npyDir, jsonPath;
  bool sweep = false;
};

/// ../shared/baselines, 4 heads x 32 on an H200: forward + backward ms of
/// every anchor measured for the layer and graph (0: not measured).
struct Anchor {
  const char *layer, *graphPrefix;
  double paper, cudnn, pyg;
};
constexpr Anchor kAnchors[] = {
    {"gatv2", "rmat:scale=20", 38.035, 1288.907, 213.009},  {"gatv2", "grid:side=1024", 20.996, 14.394, 59.414},
    {"gatv2", "er:n=100000", 13.465, 23.161, 124.565},      {"gatv2", "tolokers", 2.889, 7.978, 11.199},
    {"gatv2", "squirrel", 1.915, 0, 4.594},                 {"gat", "rmat:scale=20", 0, 1119.395, 0},
    {"gat", "grid:side=1024", 0, 14.466, 0},                {"gat", "er:n=100000", 0, 21.131, 0},
    {"gat", "tolokers", 0, 6.459, 0},                       {"transformer", "rmat:scale=20", 32.673, 0, 201.695},
    {"transformer", "grid:side=1024", 26.803, 0, 60.985},   {"transformer", "er:n=100000", 10.236, 0, 114.488},
    {"transformer", "tolokers", 2.829, 0, 10.108},          {"transformer", "squirrel", 1.718, 0, 4.105}};

/// The fastest anchor's forward + backward ms, or 0 when none was measured.
double bestAnchor(const std::string &layer, const std::string &spec) {
  double best = 0;
  for (const Anchor &a : kAnchors)
    if (layer == a.layer && spec.rfind(a.graphPrefix, 0) == 0)
      for (double v : {a.paper, a.cudnn, a.pyg})
        if (v > 0 && (best == 0 || v < best))
          best = v;
  return best;
}

struct Row {
  std::string graph, impl;
  double fwd = 0, fwdbwd = 0, peakMiB = 0, essentialMiB = 0;
  double csrMiB = 0; ///< the graph as one CSR (offsets and indices): what any kernel must read of it
};

/// A layer's inputs and output gradients, random, on the device.
struct Bound {
  exec::OwnedTensors tensors;
  exec::DeviceTensors forward, backward;
  double bytes = 0, gradientBytes = 0; ///< inputs and d_<output>s; the inputs' gradients
};

void bind(Bound &b, const lower::LoweredLayer &lowered, const graph::Graph &g) {
  uint64_t seed = 1;
  auto add = [&](const dsl::InputPtr &in, bool gradient) {
    const exec::DeviceTensor &t = b.tensors.add(in->name, ref::bindingRows(*in, g), in->shape.size());
    exec::fillRandom(t, seed++);
    b.backward[in->name] = t;
    if (!gradient)
      b.forward[in->name] = t;
    b.bytes += double(t.rows * t.cols) * 4;
    if (!gradient)
      b.gradientBytes += double(t.rows * t.cols) * 4;
  };
  for (const dsl::InputPtr &in : lowered.layer.inputs())
    add(in, false);
  for (const dsl::InputPtr &in : lowered.backward.plan.outputGradients)
    add(in, true);
}

lower::LoweredLayer build(const std::string &layer, const Options &o) {
  layers::LayerOptions options;
  options.dim = o.dim;
  if (layer == "sage") {
    options.dim = o.heads * o.dim;
    options.aggregation = "mean";
  } else {
    options.heads = o.heads;
  }
  return lower::lowerLayer(layers::buildLayer(layer, options));
}

Row timeLayer(const std::string &spec, const std::string &layer, const graph::Graph &g, exec::DeviceGraph &dg,
              const Options &o, const autotune::RuleOptions &rule = {}) {
  const lower::LoweredLayer lowered = build(layer, o);
  Bound b;
  bind(b, lowered, g);
  const exec::LayerPrograms programs = autotune::rulePrograms(lowered, g, rule);
  exec::LayerRunner runner(lowered, dg, programs);
  runner.prepare(true);
  std::printf("  %-12s forward: %s", layer.c_str(), runner.program(exec::Pass::Forward).describe().c_str());
  std::printf("  %-12s backward: %s", "", runner.program(exec::Pass::Backward).describe().c_str());
  Row r{spec, layer == "sage" ? "spmm (sage mean)" : rule.fuseAttentionBackward ? layer : layer + " unfused"};
  r.fwd = medianMs([&] { runner.forward(b.forward); }, o.warmup, o.reps);
  r.fwdbwd = medianMs(
      [&] {
        runner.forward(b.forward);
        runner.backward(b.backward);
      },
      o.warmup, o.reps);
  double outputBytes = 0;
  const size_t growth = bench::peakGrowth([&] {
    exec::DeviceGraph fresh(g);
    exec::LayerRunner first(lowered, fresh, programs);
    for (const auto &[name, t] : first.forward(b.forward))
      outputBytes += double(t.rows * t.cols) * 4;
    first.backward(b.backward);
  });
  r.peakMiB = (b.bytes + double(growth)) / (1 << 20);
  r.essentialMiB = (b.bytes + outputBytes + b.gradientBytes) / (1 << 20);
  const double indexBytes = g.indexType() == graph::IndexType::Int32 ? 4 : 8;
  r.csrMiB = double(g.numNodes() + 1 + g.numEdges()) * indexBytes / (1 << 20);
  return r;
}

/// Forward and forward + backward ms of each layer over lanes per row and
/// heavy-row segment lengths: what the rule's constants should be.
void sweep(const std::string &spec, const graph::Graph &g, exec::DeviceGraph &dg, const Options &o) {
  for (const std::string &layer : o.layers)
    for (int group : {4, 8, 16, 32})
      for (int64_t segment : {64, 256}) {
        autotune::RuleOptions rule;
        rule.group = group;
        rule.segmentLength = segment;
        Options quiet = o;
        const Row r = timeLayer(spec, layer, g, dg, quiet, rule);
        std::printf("sweep %s %s group=%d segment=%lld: fwd %.3f fwd+bwd %.3f\n", spec.c_str(), layer.c_str(), group,
                    static_cast<long long>(segment), r.fwd, r.fwdbwd);
      }
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  CLI::App app{"Attention layers on the GPU: gnnjit's fused kernels vs the same graph's SpMM and the baselines"};
  app.add_option("graphs", o.graphs, "graphs (GRAPH specs); self loops and duplicate edges removed, as the baselines");
  app.add_option("--layers", o.layers, "attention layers to time")->delimiter(',');
  app.add_option("--heads", o.heads, "heads")->check(CLI::Range(int64_t{1}, int64_t{64}));
  app.add_option("--dim", o.dim, "features per head")->check(CLI::Range(int64_t{1}, int64_t{1024}));
  app.add_option("--reps", o.reps, "timed runs (median)")->check(CLI::Range(1, 1000));
  app.add_option("--warmup", o.warmup, "untimed runs first")->check(CLI::Range(0, 1000));
  app.add_option("--dump-npy", o.npyDir,
                 "write each graph's edge index as <DIR>/<name>.npy for bench/python/bench_pyg_attention.py");
  app.add_option("--json", o.jsonPath, "also write one JSON line per measurement here");
  app.add_flag("--sweep", o.sweep, "only time the layers over lanes per row and heavy-row segment lengths");
  CLI11_PARSE(app, argc, argv);
  try {
    if (!runtime::hasCudaDevice()) {
      std::printf("bench_attention needs a CUDA device; none found.\n");
      return 77;
    }
    std::ofstream json;
    if (!o.jsonPath.empty())
      json.open(o.jsonPath);
    std::vector<Row> rows;
    std::vector<std::string> goals;
    for (const std::string &spec : o.graphs) {
      const graph::Graph g = bench::loadBenchGraph(spec, o.npyDir);
      exec::DeviceGraph dg(g);
      if (o.sweep) {
        sweep(spec, g, dg, o);
        continue;
      }
      const Row spmm = timeLayer(spec, "sage", g, dg, o);
      rows.push_back(spmm);
      const bool small = g.numEdges() < 2'000'000; // launch-bound: the tolokers and squirrel goal
      std::vector<Row> timed;
      for (const std::string &layer : o.layers) {
        // The backward with shared edge loops (the default), then separate.
        for (bool fuse : {true, false}) {
          autotune::RuleOptions rule;
          rule.fuseAttentionBackward = fuse;
          timed.push_back(timeLayer(spec, layer, g, dg, o, rule));
        }
      }
      for (const Row &r : timed) {
        rows.push_back(r);
        const std::string layer = r.impl.substr(0, r.impl.find(' '));
        std::string line = fmt::format("{} {}: fwd / SpMM fwd {:.2f} (goal <= 2); fwd+bwd / SpMM fwd {:.2f} (goal <= 5)",
                                       spec, r.impl, r.fwd / spmm.fwd, r.fwdbwd / spmm.fwd);
        if (small)
          line += fmt::format("; fwd+bwd / SpMM fwd+bwd {:.2f} (goal <= 3)", r.fwdbwd / spmm.fwdbwd);
        if (const double best = bestAnchor(layer, spec); best > 0)
          line += fmt::format("; fwd+bwd / best anchor {:.3f} (goal <= 0.5, anchor {:.3f} ms)", r.fwdbwd / best, best);
        line += fmt::format("; peak / (inputs + outputs + gradients) {:.2f} (goal <= 1.2: {:.1f} of {:.1f} MiB), "
                            "{:.2f} with the graph's CSR ({:.1f} MiB) counted as an input",
                            r.peakMiB / r.essentialMiB, r.peakMiB, r.essentialMiB,
                            r.peakMiB / (r.essentialMiB + r.csrMiB), r.csrMiB);
        goals.push_back(line);
      }
      if (json.is_open())
        for (size_t k = rows.size() - 1 - timed.size(); k < rows.size(); ++k)
          json << nlohmann::json{{"graph", rows[k].graph},     {"impl", rows[k].impl},
                                 {"heads", o.heads},           {"dim", o.dim},
                                 {"fwd_ms", rows[k].fwd},      {"fwdbwd_ms", rows[k].fwdbwd},
                                 {"peak_MiB", rows[k].peakMiB}, {"essential_MiB", rows[k].essentialMiB},
                                 {"graph_csr_MiB", rows[k].csrMiB}}
                      .dump()
               << "\n";
    }
    if (o.sweep)
      return 0;
    std::printf("\n%-28s %-17s %9s %9s %9s %10s %10s\n", "graph", "impl", "fwd ms", "fwd+bwd", "bwd/fwd", "peak MiB",
                "in+out+grad");
    for (const Row &r : rows)
      std::printf("%-28s %-17s %9.3f %9.3f %9.2f %10.1f %10.1f\n", r.graph.c_str(), r.impl.c_str(), r.fwd, r.fwdbwd,
                  (r.fwdbwd - r.fwd) / r.fwd, r.peakMiB, r.essentialMiB);
    std::printf("\n");
    for (const std::string &line : goals)
      std::printf("%s\n", line.c_str());
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "bench_attention: %s\n", e.what());
    return 1;
  }
}
