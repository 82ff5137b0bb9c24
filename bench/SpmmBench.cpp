// GCN aggregation (the SpMM family) on the GPU, side by side in one process:
// the generated kernel, cuSPARSE with everything cached on the graph, and
// plain uncached cuSPARSE (descriptors, workspace and handle made in every
// call, as a framework calling it per step does). Forward and forward +
// backward, median of --reps after --warmup runs (CUDA events); effective
// GB/s under a stated traffic model; peak device memory; NVRTC cold compile
// and warm-cache load times per kernel. A program that prints a table.
//
// Traffic model (the minimum an SpMM must move, as ../shared/baselines
// uses): per SpMM, the CSR (column index and one 4-byte value or degree per
// edge) plus each input row read once and each output row written once:
//   bytes = E * (index bytes + 4) + 2 * N * F * 4.
// Forward + backward is two SpMMs.
#include "BenchSupport.h"

#include "codegen/Version.h"
#include "exec/CusparseSpmm.h"
#include "autotune/PlanLayer.h"
#include "exec/LayerRunner.h"
#include "graph/DegreeStats.h"
#include "graph/GraphSource.h"
#include "graph/io/NpyEdgeIndex.h"
#include "layers/Library.h"
#include "lower/Pipeline.h"
#include "runtime/CudaCheck.h"
#include "runtime/Device.h"
#include "runtime/DeviceBuffer.h"
#include "runtime/EventTiming.h"
#include "runtime/KernelCache.h"
#include "support/Error.h"
#include "support/Random.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <unistd.h>
#include <vector>

using namespace gnnjit;
using runtime::medianMs;
namespace fs = std::filesystem;

namespace {

struct Options {
  std::vector<std::string> graphs = {"rmat:scale=20,ef=16,seed=0", "grid:side=1024", "er:n=100000,deg=100,seed=0",
                                     "tolokers"};
  int64_t F = 128;
  int reps = 10, warmup = 3;
  std::string npyDir, jsonPath;
  bool sweep = false;
};

/// The paper's kernels on the same kinds of graph (../shared/baselines): ms.
struct PaperFigures {
  const char *graphPrefix;
  double fwd, fwdbwd;
};
constexpr PaperFigures kPaper[] = {
    {"rmat:scale=20", 1.522, 5.786}, {"grid:side=1024", 0.612, 2.087}, {"er:n=100000", 0.84, 2.68}};
constexpr double kPaperTolokersFwdBwd = 0.26;

runtime::DeviceBuffer<float> randomRows(int64_t rows, int64_t cols, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> host(static_cast<size_t>(rows * cols));
  for (float &v : host)
    v = static_cast<float>(2 * rng.uniform() - 1);
  return runtime::DeviceBuffer<float>::fromHost(host);
}

/// GCN's weight d_j^-1/2 d_i^-1/2 (in-degrees, 0 where 0) at each position of a CSR.
std::vector<float> gcnValues(const graph::Graph &g, bool transposed) {
  std::vector<double> inv(static_cast<size_t>(g.numNodes()));
  for (int64_t v = 0; v < g.numNodes(); ++v) {
    const int64_t d = g.incoming().degree(v);
    inv[static_cast<size_t>(v)] = d > 0 ? 1.0 / std::sqrt(double(d)) : 0.0;
  }
  const graph::Csr &csr = transposed ? g.outgoing() : g.incoming();
  std::vector<float> values(static_cast<size_t>(g.numEdges()));
  for (int64_t row = 0; row < csr.numRows(); ++row)
    for (int64_t p = csr.rowBegin(row); p < csr.rowEnd(row); ++p)
      values[static_cast<size_t>(p)] =
          static_cast<float>(inv[static_cast<size_t>(row)] * inv[static_cast<size_t>(csr.index(p))]);
  return values;
}

struct Row {
  std::string graph, variant;
  double fwd = 0, fwdbwd = 0;
  double gbps = 0;
  double peakMiB = 0;
};

} // namespace

int main(int argc, char **argv) {
  Options o;
  CLI::App app{"GCN aggregation on the GPU: generated kernel vs cuSPARSE (cached and uncached), forward and "
               "forward+backward"};
  app.add_option("graphs", o.graphs,
                 "graphs (GRAPH specs as gnnjit takes them); self loops and duplicate edges "
                 "are removed, as the baselines did");
  app.add_option("--F", o.F, "feature width")->check(CLI::PositiveNumber);
  app.add_option("--reps", o.reps, "timed runs (median)")->check(CLI::PositiveNumber);
  app.add_option("--warmup", o.warmup, "untimed runs first");
  app.add_option("--dump-npy", o.npyDir,
                 "write each graph's edge index as <DIR>/<name>.npy for bench/python/bench_pyg_gcn.py");
  app.add_option("--json", o.jsonPath, "also write one JSON line per measurement here");
  app.add_flag("--sweep", o.sweep,
               "also time the generated kernel for lanes per row 4..32 and heavy-row thresholds 32..512");
  CLI11_PARSE(app, argc, argv);
  try {
    if (!runtime::hasCudaDevice()) {
      std::printf("bench_spmm needs a CUDA device; none found.\n");
      return 77;
    }
    std::FILE *json = o.jsonPath.empty() ? nullptr : std::fopen(o.jsonPath.c_str(), "w");
    std::vector<Row> rows;
    // Compile times: a fresh cache folder, then a second cache on the same folder.
    const fs::path cacheDir = fs::temp_directory_path() / fmt::format("gnnjit-bench-cache-{}", ::getpid());
    fs::remove_all(cacheDir);
    for (const std::string &spec : o.graphs) {
      graph::Graph g = bench::loadBenchGraph(spec, o.npyDir);
      const int64_t n = g.numNodes(), F = o.F;
      layers::LayerOptions lo;
      lo.dim = F;
      const lower::LoweredLayer lowered = lower::lowerLayer(layers::buildLayer("gcn", lo));
      runtime::DeviceBuffer<float> x = randomRows(n, F, 1), dout = randomRows(n, F, 2);
      exec::DeviceTensors fin{{"x", {x.data(), n, F, F}}};
      exec::DeviceTensors bin{{"x", {x.data(), n, F, F}}, {"d_out", {dout.data(), n, F, F}}};
      const double indexBytes = g.indexType() == graph::IndexType::Int32 ? 4 : 8;
      const double bytesPerSpmm = double(g.numEdges()) * (indexBytes + 4) + 2.0 * double(n) * double(F) * 4;

      exec::DeviceGraph dg(g);
      for (autotune::Variant variant : {autotune::Variant::Generated, autotune::Variant::Cusparse}) {
        autotune::RuleOptions rule;
        rule.variant = variant;
        const exec::LayerPrograms programs = autotune::rulePrograms(lowered, g, rule);
        exec::RunnerOptions ro;
        runtime::KernelCache cold(runtime::KernelCacheConfig{cacheDir, codegen::kGeneratorVersion});
        ro.cache = &cold;
        exec::LayerRunner runner(lowered, dg, programs, ro);
        runner.prepare(true);
        const exec::CompileReport coldReport = runner.compileReport();
        runtime::KernelCache warm(runtime::KernelCacheConfig{cacheDir, codegen::kGeneratorVersion});
        exec::RunnerOptions wo = ro;
        wo.cache = &warm;
        exec::LayerRunner warmRunner(lowered, dg, programs, wo);
        warmRunner.prepare(true);
        const exec::CompileReport warmReport = warmRunner.compileReport();
        std::printf("  %-9s kernels: %d modules; cold %.1f ms (%d NVRTC compiles), warm cache %.2f ms (%d disk hits)\n",
                    std::string(autotune::variantName(variant)).c_str(), coldReport.modules, coldReport.seconds * 1e3,
                    coldReport.compiled, warmReport.seconds * 1e3, warmReport.diskHits);
        std::printf("            forward: %s", runner.program(exec::Pass::Forward).describe().c_str());
        std::printf("            backward: %s", runner.program(exec::Pass::Backward).describe().c_str());
        Row r{spec, std::string(autotune::variantName(variant))};
        r.fwd = medianMs([&] { runner.forward(fin); }, o.warmup, o.reps);
        r.fwdbwd = medianMs(
            [&] {
              runner.forward(fin);
              runner.backward(bin);
            },
            o.warmup, o.reps);
        r.peakMiB = double(bench::peakGrowth([&] {
                      exec::DeviceGraph fresh(g);
                      exec::LayerRunner first(lowered, fresh, programs, ro);
                      first.forward(fin);
                      first.backward(bin);
                      GNNJIT_CUDA_CHECK(cudaDeviceSynchronize());
                    })) /
                    (1 << 20);
        r.gbps = bytesPerSpmm / (r.fwd * 1e6);
        rows.push_back(r);
      }
      if (o.sweep) {
        std::printf("  sweep of the generated kernel (fwd / fwd+bwd ms):\n");
        for (int group : {4, 8, 16, 32}) {
          std::printf("    group %2d:", group);
          for (int64_t heavy : {32, 128, 512}) {
            autotune::RuleOptions rule;
            rule.variant = autotune::Variant::Generated;
            rule.group = group;
            rule.heavyThreshold = heavy;
            exec::LayerRunner runner(lowered, dg, autotune::rulePrograms(lowered, g, rule));
            runner.prepare(true);
            const double f = medianMs([&] { runner.forward(fin); }, o.warmup, o.reps);
            const double fb = medianMs(
                [&] {
                  runner.forward(fin);
                  runner.backward(bin);
                },
                o.warmup, o.reps);
            std::printf("  heavy %4lld: %.3f / %.3f", (long long)heavy, f, fb);
          }
          std::printf("\n");
        }
      }
      {
        // Plain cuSPARSE: same normalized values (made once, untimed), nothing else kept.
        const auto valuesIn = runtime::DeviceBuffer<float>::fromHost(gcnValues(g, false));
        const auto valuesOut = runtime::DeviceBuffer<float>::fromHost(gcnValues(g, true));
        runtime::DeviceBuffer<float> y(static_cast<size_t>(n * F)), dx(static_cast<size_t>(n * F));
        const exec::DeviceCsrView in = dg.csr(exec::Direction::In), out = dg.csr(exec::Direction::Out);
        auto fwd = [&] { exec::cusparseSpmmUncached(in, valuesIn.data(), x.data(), F, y.data(), F, F, nullptr); };
        auto bwd = [&] { exec::cusparseSpmmUncached(out, valuesOut.data(), dout.data(), F, dx.data(), F, F, nullptr); };
        Row r{spec, "cusparse-uncached"};
        r.fwd = medianMs(fwd, o.warmup, o.reps);
        r.fwdbwd = medianMs(
            [&] {
              fwd();
              bwd();
            },
            o.warmup, o.reps);
        r.peakMiB = double(bench::peakGrowth([&] {
                      exec::DeviceGraph fresh(g);
                      const auto vin = runtime::DeviceBuffer<float>::fromHost(gcnValues(g, false));
                      const auto vout = runtime::DeviceBuffer<float>::fromHost(gcnValues(g, true));
                      runtime::DeviceBuffer<float> y2(static_cast<size_t>(n * F)), dx2(static_cast<size_t>(n * F));
                      exec::cusparseSpmmUncached(fresh.csr(exec::Direction::In), vin.data(), x.data(), F, y2.data(), F,
                                                 F, nullptr);
                      exec::cusparseSpmmUncached(fresh.csr(exec::Direction::Out), vout.data(), dout.data(), F,
                                                 dx2.data(), F, F, nullptr);
                      GNNJIT_CUDA_CHECK(cudaDeviceSynchronize());
                    })) /
                    (1 << 20);
        r.gbps = bytesPerSpmm / (r.fwd * 1e6);
        rows.push_back(r);
      }
      std::printf("  graph arrays, degrees and cuSPARSE values/workspaces on the device: %.1f MiB\n",
                  double(dg.deviceBytes()) / (1 << 20));
    }

    std::printf(
        "\nGCN aggregation, F = %lld fp32, median of %d (ms); GB/s = traffic model / forward time; "
        "peak = device memory a first forward+backward needs beyond its inputs: graph arrays, outputs, scratch, "
        "cuSPARSE values and workspaces (MiB)\n",
        (long long)o.F, o.reps);
    std::printf("%-30s %-18s %9s %9s %8s %8s %11s %11s %9s %9s\n", "graph", "variant", "fwd", "fwd+bwd", "GB/s", "peak",
                "fwd/uncach", "fb/uncach", "fwd/paper", "fb/paper");
    for (const Row &r : rows) {
      const Row *uncached = nullptr;
      for (const Row &u : rows)
        if (u.graph == r.graph && u.variant == "cusparse-uncached")
          uncached = &u;
      const PaperFigures *paper = nullptr;
      for (const PaperFigures &p : kPaper)
        if (r.graph.rfind(p.graphPrefix, 0) == 0)
          paper = &p;
      const std::string fwdPaper = paper ? fmt::format("{:.2f}", r.fwd / paper->fwd) : "-";
      const std::string fbPaper = paper                   ? fmt::format("{:.2f}", r.fwdbwd / paper->fwdbwd)
                                  : r.graph == "tolokers" ? fmt::format("{:.2f}", r.fwdbwd / kPaperTolokersFwdBwd)
                                                          : "-";
      std::printf("%-30s %-18s %9.3f %9.3f %8.0f %8.1f %11.2f %11.2f %9s %9s\n", r.graph.c_str(), r.variant.c_str(),
                  r.fwd, r.fwdbwd, r.gbps, r.peakMiB, r.fwd / uncached->fwd, r.fwdbwd / uncached->fwdbwd,
                  fwdPaper.c_str(), fbPaper.c_str());
      if (json)
        std::fprintf(json, "%s\n",
                     nlohmann::json{{"graph", r.graph},
                                    {"variant", r.variant},
                                    {"F", o.F},
                                    {"fwd_ms", r.fwd},
                                    {"fwdbwd_ms", r.fwdbwd},
                                    {"fwd_GBps", r.gbps},
                                    {"peak_fwdbwd_MiB", r.peakMiB}}
                         .dump()
                         .c_str());
    }
    std::printf("(ratios < 1: faster than the reference; paper = ../shared/baselines paper-kernels-h200, tolokers "
                "fwd+bwd from scale-and-small-graphs-h200)\n");
    if (json)
      std::fclose(json);
    fs::remove_all(cacheDir);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "bench_spmm: %s\n", e.what());
    return 1;
  }
  return 0;
}
