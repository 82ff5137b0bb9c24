// SAGE max (the reduction family) on the GPU, side by side in one process:
// gnnjit's generated kernels, a plain one-thread-per-(node, feature) kernel
// (its backward scatters with float atomics: fast, not deterministic), and
// the same kernels with heavy rows merged by a second pass ("2nd-pass"), and
// the SpMM of the same graph (SAGE mean: how close the max gets to the
// memory wall). Forward and forward + backward, median of --reps after
// --warmup runs (CUDA events), peak device memory, and the ratios the
// reduction issue's goals name against ../shared/baselines' anchors.
#include "BenchSupport.h"

#include "exec/HostTransfer.h"
#include "exec/KernelSource.h"
#include "autotune/PlanLayer.h"
#include "exec/LayerRunner.h"
#include "exec/RandomInputs.h"
#include "layers/Library.h"
#include "lower/Pipeline.h"
#include "runtime/Device.h"
#include "runtime/EventTiming.h"
#include "support/Error.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>

extern const char *const kPlainMaxSource;

using namespace gnnjit;
using runtime::medianMs;

namespace {

struct Options {
  std::vector<std::string> graphs = {"rmat:scale=20,ef=16,seed=0", "grid:side=1024", "er:n=100000,deg=100,seed=0",
                                     "tolokers"};
  int64_t F = 128;
  int reps = 10, warmup = 3;
  std::string npyDir, jsonPath;
  bool sweepSegments = false;
};

/// ../shared/baselines, max aggregation at F = 128 on an H200: ms.
struct Anchor {
  const char *graphPrefix;
  double paperFwd, paperFwdBwd, cudnnFwd, cudnnFwdBwd; ///< 0: not measured
};
constexpr Anchor kAnchors[] = {{"rmat:scale=20", 3.757, 5.184, 16.732, 19.0},
                               {"grid:side=1024", 2.223, 3.662, 0.797, 3.455},
                               {"er:n=100000", 0.914, 1.186, 0.993, 1.338},
                               {"tolokers", 0, 0, 0.655, 1.24}};

const Anchor *anchorOf(const std::string &spec) {
  for (const Anchor &a : kAnchors)
    if (spec.rfind(a.graphPrefix, 0) == 0)
      return &a;
  return nullptr;
}

double bestFwdBwd(const Anchor &a) {
  double best = 1e300;
  for (double v : {a.paperFwdBwd, a.cudnnFwdBwd})
    if (v > 0)
      best = std::min(best, v);
  return best;
}

struct Row {
  std::string graph, impl;
  double fwd = 0, fwdbwd = 0, peakMiB = 0;
};

lower::LoweredLayer sage(const std::string &aggregation, int64_t F) {
  layers::LayerOptions o;
  o.dim = F;
  o.aggregation = aggregation;
  return lower::lowerLayer(layers::buildLayer("sage", o));
}

/// Times a layer through the runner: forward, forward + backward, peak.
Row timeRunner(const std::string &spec, const std::string &impl, const lower::LoweredLayer &lowered,
               const graph::Graph &g, exec::DeviceGraph &dg, const exec::DeviceTensors &fin,
               const exec::DeviceTensors &bin, const Options &o, const autotune::RuleOptions &rule = {}) {
  const exec::LayerPrograms programs = autotune::rulePrograms(lowered, g, rule);
  exec::LayerRunner runner(lowered, dg, programs);
  runner.prepare(true);
  std::printf("  %-10s forward: %s", impl.c_str(), runner.program(exec::Pass::Forward).describe().c_str());
  std::printf("  %-10s backward: %s", "", runner.program(exec::Pass::Backward).describe().c_str());
  Row r{spec, impl};
  r.fwd = medianMs([&] { runner.forward(fin); }, o.warmup, o.reps);
  r.fwdbwd = medianMs(
      [&] {
        runner.forward(fin);
        runner.backward(bin);
      },
      o.warmup, o.reps);
  r.peakMiB = double(bench::peakGrowth([&] {
                exec::DeviceGraph fresh(g);
                exec::LayerRunner first(lowered, fresh, programs);
                first.forward(fin);
                first.backward(bin);
              })) /
              (1 << 20);
  return r;
}

/// The plain kernel of bench/plain_max.cuh on the graph's int32 CSR.
Row timePlain(const std::string &spec, const graph::Graph &g, exec::DeviceGraph &dg, const float *x, const float *dout,
              const Options &o) {
  runtime::CompileOptions copts;
  copts.arch = runtime::targetArch();
  runtime::KernelCache &cache = exec::defaultKernelCache();
  const runtime::Source source = exec::kernelSource("plain_max.cu", kPlainMaxSource);
  const runtime::Kernel forward = cache.kernel(source, copts, "plain_max_forward");
  const runtime::Kernel backward = cache.kernel(source, copts, "plain_max_backward");
  const long long n = g.numNodes();
  const int F = static_cast<int>(o.F);
  const exec::DeviceCsrView csr = dg.csr(exec::Direction::In);
  const auto *offsets = static_cast<const int *>(csr.offsets), *cols = static_cast<const int *>(csr.indices);
  runtime::DeviceBuffer<float> out(static_cast<size_t>(n * F)), dx(static_cast<size_t>(n * F));
  runtime::DeviceBuffer<int> args(static_cast<size_t>(n * F));
  float *outData = out.data(), *dxData = dx.data();
  int *argData = args.data();
  const dim3 grid(static_cast<unsigned>((n * F + 255) / 256)), block(256);
  auto fwd = [&] { forward(grid, block, 0, nullptr, offsets, cols, x, outData, argData, n, F); };
  auto bwd = [&] {
    dx.fillZero();
    backward(grid, block, 0, nullptr, cols, static_cast<const int *>(argData), dout, dxData, n, F);
  };
  Row r{spec, "plain"};
  r.fwd = medianMs(fwd, o.warmup, o.reps);
  r.fwdbwd = medianMs(
      [&] {
        fwd();
        bwd();
      },
      o.warmup, o.reps);
  r.peakMiB = double(out.bytes() + dx.bytes() + args.bytes()) / (1 << 20);
  return r;
}

/// Forward times of gnnjit's SAGE max over heavy-row thresholds and segment
/// lengths, the rule's choice marked: what the rule's constants should be.
void sweepSegments(const std::string &spec, const lower::LoweredLayer &lowered, exec::DeviceGraph &dg,
                   const exec::DeviceTensors &fin, const Options &o) {
  const std::vector<int64_t> thresholds = {32, 64, 128, 256, 512}, lengths = {32, 64, 128, 256};
  std::printf("\n%s: SAGE max forward ms by heavy-row threshold (rows) and segment length (columns)\n%10s",
              spec.c_str(), "");
  for (int64_t l : lengths)
    std::printf(" %9lld", static_cast<long long>(l));
  std::printf("\n");
  for (int64_t threshold : thresholds) {
    std::printf("%10lld", static_cast<long long>(threshold));
    for (int64_t length : lengths) {
      autotune::RuleOptions rule;
      rule.heavyThreshold = threshold;
      rule.segmentLength = length;
      exec::LayerRunner runner(lowered, dg, autotune::rulePrograms(lowered, dg.host(), rule));
      std::printf(" %9.3f", medianMs([&] { runner.forward(fin); }, o.warmup, o.reps));
    }
    std::printf("\n");
  }
  exec::LayerRunner rule(lowered, dg, autotune::rulePrograms(lowered, dg.host()));
  std::printf("the rule: %s", rule.program(exec::Pass::Forward).describe().c_str());
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  CLI::App app{"SAGE max on the GPU: gnnjit's reduction kernels vs a plain kernel and the same graph's SpMM"};
  app.add_option("graphs", o.graphs, "graphs (GRAPH specs); self loops and duplicate edges removed, as the baselines");
  app.add_option("--F", o.F, "feature width")->check(CLI::Range(int64_t{1}, int64_t{4096}));
  app.add_option("--reps", o.reps, "timed runs (median)")->check(CLI::Range(1, 1000));
  app.add_option("--warmup", o.warmup, "untimed runs first")->check(CLI::Range(0, 1000));
  app.add_option("--dump-npy", o.npyDir,
                 "write each graph's edge index as <DIR>/<name>.npy for bench/python/bench_pyg_sage.py");
  app.add_option("--json", o.jsonPath, "also write one JSON line per measurement here");
  app.add_flag("--sweep-segments", o.sweepSegments,
               "only time gnnjit's forward over heavy-row thresholds and segment lengths");
  CLI11_PARSE(app, argc, argv);
  try {
    if (!runtime::hasCudaDevice()) {
      std::printf("bench_reduction needs a CUDA device; none found.\n");
      return 77;
    }
    std::ofstream json;
    if (!o.jsonPath.empty())
      json.open(o.jsonPath);
    std::vector<Row> rows;
    std::vector<std::string> goals;
    for (const std::string &spec : o.graphs) {
      const graph::Graph g = bench::loadBenchGraph(spec, o.npyDir);
      const int64_t n = g.numNodes(), F = o.F;
      exec::OwnedTensors tensors;
      const exec::DeviceTensor &x = tensors.add("x", n, F), &dout = tensors.add("d_out", n, F);
      exec::fillRandom(x, 1);
      exec::fillRandom(dout, 2);
      const exec::DeviceTensors fin{{"x", x}}, bin{{"x", x}, {"d_out", dout}};
      exec::DeviceGraph dg(g);
      if (o.sweepSegments) {
        sweepSegments(spec, sage("max", F), dg, fin, o);
        continue;
      }
      const Row ours = timeRunner(spec, "gnnjit", sage("max", F), g, dg, fin, bin, o);
      // The same kernels with heavy rows merged by a second pass over
      // per-segment partials instead of packed atomics (the same when no row is heavy).
      autotune::RuleOptions secondPass;
      secondPass.packedMerge = false;
      const Row oursSecondPass = timeRunner(spec, "2nd-pass", sage("max", F), g, dg, fin, bin, o, secondPass);
      const Row spmm = timeRunner(spec, "spmm-mean", sage("mean", F), g, dg, fin, bin, o);
      const Row plain = timePlain(spec, g, dg, x.data, dout.data, o);
      for (const Row &r : {ours, oursSecondPass, plain, spmm})
        rows.push_back(r);
      const double bwd = ours.fwdbwd - ours.fwd;
      const double argsMiB = double(n * F * (g.indexType() == graph::IndexType::Int32 ? 4 : 8)) / (1 << 20);
      const double essentialMiB = double(2 * n * F * 4 + exec::DeviceGraph(g).deviceBytes()) / (1 << 20);
      std::string line = fmt::format("{}: forward / SpMM forward {:.2f} (goal <= 1.2); backward / forward {:.2f}{}; ",
                                     spec, ours.fwd / spmm.fwd, bwd / ours.fwd,
                                     g.stats().in.mean >= 16 ? " (goal <= 0.25)" : " (no goal: mean degree < 16)");
      if (const Anchor *a = anchorOf(spec))
        line += fmt::format("fwd+bwd / best anchor {:.2f} (goal <= 0.7, anchor {:.3f} ms); ", ours.fwdbwd / bestFwdBwd(*a),
                            bestFwdBwd(*a));
      line += fmt::format("peak {:.1f} MiB = output + gradient {:.1f} MiB + graph arrays + {:.1f} MiB (arg positions "
                          "{:.1f} MiB)",
                          ours.peakMiB, double(2 * n * F * 4) / (1 << 20), ours.peakMiB - essentialMiB, argsMiB);
      goals.push_back(line);
      if (json.is_open())
        for (const Row &r : {ours, oursSecondPass, plain, spmm})
          json << nlohmann::json{{"graph", r.graph}, {"impl", r.impl},     {"F", F},
                                 {"fwd_ms", r.fwd},  {"fwdbwd_ms", r.fwdbwd}, {"peak_MiB", r.peakMiB}}
                      .dump()
               << "\n";
    }
    if (o.sweepSegments)
      return 0;
    std::printf("\n%-28s %-10s %9s %9s %9s %10s\n", "graph", "impl", "fwd ms", "fwd+bwd", "bwd/fwd", "peak MiB");
    for (const Row &r : rows)
      std::printf("%-28s %-10s %9.3f %9.3f %9.2f %10.1f\n", r.graph.c_str(), r.impl.c_str(), r.fwd, r.fwdbwd,
                  (r.fwdbwd - r.fwd) / r.fwd, r.peakMiB);
    std::printf("\n");
    for (const std::string &line : goals)
      std::printf("%s\n", line.c_str());
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "bench_reduction: %s\n", e.what());
    return 1;
  }
}
