#include "cli/RunCommand.h"
#include "cli/TensorFiles.h"

#include "cli/CudaRun.h"
#include "cli/GraphOptions.h"
#include "cli/LayerOptionsCli.h"
#include "dsl/Differentiate.h"
#include "exec/HostTransfer.h"
#include "layers/Library.h"
#include "lower/Pipeline.h"
#include "ref/Bindings.h"
#include "ref/Executor.h"
#include "runtime/Device.h"
#include "support/Error.h"
#include "support/Random.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>

namespace gnnjit::cli {

namespace fs = std::filesystem;

// ---- the command ----------------------------------------------------------------

namespace {

struct RunArgs {
  std::string layer = "gcn";
  GraphArgs graph;
  std::string backend = "auto";
  std::string variant = "auto";
  bool check = false;
  int reps = 10;
  LayerOptionArgs layerArgs;
  uint64_t seed = 0;
  bool backward = false;
  bool json = false;
  bool printLayer = false;
  std::string inputsDir;
  std::string dumpDir;
};

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Checksum {
  double sum = 0, sumSq = 0, maxAbs = 0;
  int64_t nonFinite = 0;
};

Checksum checksum(const ref::Tensor &t) {
  Checksum c;
  for (double v : t.values) {
    if (!std::isfinite(v)) {
      ++c.nonFinite;
      continue;
    }
    c.sum += v;
    c.sumSq += v * v;
    c.maxAbs = std::max(c.maxAbs, std::abs(v));
  }
  return c;
}

ref::Tensor randomTensor(int64_t rows, int64_t cols, Rng rng) {
  ref::Tensor t(rows, cols);
  for (double &v : t.values)
    v = 2.0 * rng.uniform() - 1.0;
  return t;
}

ref::Tensor loadChecked(const fs::path &dir, const std::string &name, int64_t rows, int64_t cols,
                        std::string_view what) {
  ref::Tensor t = readTensorFile(dir, name);
  if (t.rows != rows || t.cols != cols)
    throwUserError("'{}' is {} x {}, but {} '{}' needs {} x {} on this graph and layer",
                   (dir / (name + ".json")).string(), t.rows, t.cols, what, name, rows, cols);
  return t;
}

struct Named {
  std::string name;
  const ref::Tensor *tensor;
};

nlohmann::ordered_json checksumJson(const std::string &key, const std::string &name, const ref::Tensor &t) {
  const Checksum c = checksum(t);
  return {{key, name},         {"rows", t.rows},      {"cols", t.cols},           {"sum", c.sum},
          {"sum_sq", c.sumSq}, {"max_abs", c.maxAbs}, {"non_finite", c.nonFinite}};
}

void printChecksumRow(std::string_view label, const std::string &name, const ref::Tensor &t) {
  const Checksum c = checksum(t);
  fmt::print("{:<8} {:<10} [{} x {}]  sum {:.12g}  sum_sq {:.12g}  max_abs {:.12g}{}\n", label, name, t.rows, t.cols,
             c.sum, c.sumSq, c.maxAbs, c.nonFinite ? fmt::format("  NON-FINITE {}", c.nonFinite) : "");
}

/// How far the GPU's results are from the reference, per tensor.
struct CheckRow {
  std::string what, name;
  exec::Agreement agreement;
};
constexpr double kCheckTolerance = 1e-4;

std::string indentLines(const std::string &label, const std::string &text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    out += (out.empty() ? label : std::string(label.size(), ' ')) + text.substr(start, end - start) + "\n";
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  return out;
}


void run(const RunArgs &args) {
  const bool haveGpu = runtime::hasCudaDevice();
  if (args.backend == "cuda" && !haveGpu)
    throwUserError("--backend cuda needs a CUDA device and none was found; --backend auto compiles the kernels "
                   "and runs the CPU reference instead");
  const bool onGpu = args.backend == "cuda" || (args.backend == "auto" && haveGpu);
  const exec::Variant variant = exec::parseVariant(args.variant);

  const layers::LayerInfo &info = layers::findLayer(args.layer);
  const layers::LayerOptions options = args.layerArgs.options(info);
  const dsl::Layer layer = info.build(options);

  auto start = Clock::now();
  const LoadedGraph loaded = loadGraph(args.graph);
  const double graphMs = msSince(start);
  const graph::Graph &g = loaded.graph;

  // Inputs.
  const bool fromFiles = !args.inputsDir.empty();
  const Rng base(args.seed);
  ref::TensorMap inputs;
  for (size_t k = 0; k < layer.inputs().size(); ++k) {
    const dsl::InputDecl &in = *layer.inputs()[k];
    const int64_t rows = ref::bindingRows(in, g), cols = in.shape.size();
    inputs[in.name] = fromFiles ? loadChecked(args.inputsDir, in.name, rows, cols, "input")
                                : randomTensor(rows, cols, base.fork(k + 1));
  }
  start = Clock::now();
  const lower::LoweredLayer lowered = lower::lowerLayer(layer);
  const double lowerMs = msSince(start);
  ref::TensorMap outputGradients;
  if (args.backward)
    for (size_t k = 0; k < lowered.backward.plan.outputGradients.size(); ++k) {
      const dsl::InputDecl &d = *lowered.backward.plan.outputGradients[k];
      const int64_t rows = g.numNodes(), cols = d.shape.size();
      outputGradients[d.name] = fromFiles ? loadChecked(args.inputsDir, d.name, rows, cols, "output gradient")
                                          : randomTensor(rows, cols, base.fork(1000 + k));
    }

  // The reference, when it is the backend or the check.
  ref::TensorMap outputs, gradients;
  double forwardMs = 0, backwardMs = 0;
  auto runReference = [&](ref::TensorMap &outs, ref::TensorMap &grads) {
    auto t0 = Clock::now();
    outs = ref::forward(lowered.layer, g, inputs);
    forwardMs = msSince(t0);
    if (args.backward) {
      ref::TensorMap backwardInputs = inputs;
      for (const auto &[name, t] : outputGradients)
        backwardInputs[name] = t;
      t0 = Clock::now();
      grads = ref::backward(lowered.layer, lowered.backward.plan, g, backwardInputs);
      backwardMs = msSince(t0);
    }
  };
  std::optional<CudaRunResult> gpu;
  std::optional<CompileOnlyResult> compiled;
  std::vector<CheckRow> checks;
  double referenceForwardMs = 0, referenceBackwardMs = 0;
  if (onGpu) {
    CudaRunOptions cudaOptions;
    cudaOptions.variant = variant;
    cudaOptions.reps = args.reps;
    gpu = runOnCuda(lowered, g, inputs, args.backward ? &outputGradients : nullptr, cudaOptions);
    outputs = gpu->outputs;
    gradients = gpu->gradients;
    forwardMs = gpu->forwardMs;
    backwardMs = gpu->backwardMs;
    if (args.check) {
      ref::TensorMap refOutputs, refGradients;
      runReference(refOutputs, refGradients);
      referenceForwardMs = forwardMs;
      referenceBackwardMs = backwardMs;
      forwardMs = gpu->forwardMs;
      backwardMs = gpu->backwardMs;
      for (const auto &[name, t] : refOutputs)
        checks.push_back({"output", name, exec::compare(t, outputs.at(name))});
      for (const auto &[name, t] : refGradients)
        checks.push_back({"grad", name, exec::compare(t, gradients.at(name))});
    }
  } else {
    if (args.backend == "auto")
      compiled = compileOnly(lowered, g, args.backward, variant);
    runReference(outputs, gradients);
  }

  // Dump.
  if (!args.dumpDir.empty()) {
    const fs::path dir = args.dumpDir;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec)
      throwUserError("cannot create the --dump folder '{}': {}", dir.string(), ec.message());
    nlohmann::ordered_json manifest = {{"layer", info.name},
                                       {"layer_hash", layer.hashHex()},
                                       {"graph", g.name()},
                                       {"nodes", g.numNodes()},
                                       {"edges", g.numEdges()}};
    nlohmann::ordered_json outs = nlohmann::ordered_json::array(), grads = nlohmann::ordered_json::array(),
                           ins = nlohmann::ordered_json::array();
    for (const auto &[name, t] : outputs) {
      writeTensorFile(dir, name, t);
      outs.push_back(name);
    }
    for (const auto &[name, t] : gradients) {
      writeTensorFile(dir, "grad_" + name, t);
      grads.push_back({{"input", name}, {"file", "grad_" + name}});
    }
    if (!fromFiles) {
      for (const auto &[name, t] : inputs) {
        writeTensorFile(dir, name, t);
        ins.push_back(name);
      }
      for (const auto &[name, t] : outputGradients) {
        writeTensorFile(dir, name, t);
        ins.push_back(name);
      }
    }
    manifest["outputs"] = outs;
    manifest["gradients"] = grads;
    manifest["generated_inputs"] = ins;
    std::ofstream(dir / "manifest.json") << manifest.dump(2) << "\n";
  }

  // Report, in the layer's declaration order.
  if (args.json) {
    nlohmann::ordered_json j = {
        {"layer", info.name},
        {"layer_hash", layer.hashHex()},
        {"pyg_class", info.pygClass},
        {"backend", onGpu ? "cuda" : "cpu"},
        {"variant", args.variant},
        {"graph", {{"name", g.name()}, {"nodes", g.numNodes()}, {"edges", g.numEdges()}}},
        {"options",
         {{"dim", options.dim},
          {"heads", options.heads},
          {"concat", options.concat},
          {"aggregation", options.aggregation},
          {"weighted", options.weighted},
          {"edge_features", options.edgeFeatures}}},
        {"seed", args.seed},
        {"inputs_from", fromFiles ? args.inputsDir : std::string("random")},
    };
    nlohmann::ordered_json outs = nlohmann::ordered_json::array(), grads = nlohmann::ordered_json::array();
    for (const dsl::LayerOutput &out : layer.outputs())
      outs.push_back(checksumJson("name", out.name, outputs.at(out.name)));
    j["outputs"] = outs;
    if (args.backward) {
      for (const dsl::InputPtr &in : layer.inputs())
        grads.push_back(checksumJson("input", in->name, gradients.at(in->name)));
      j["gradients"] = grads;
    }
    nlohmann::ordered_json timing = {{"graph_load", graphMs}, {"lower", lowerMs}, {"forward", forwardMs}};
    if (args.backward)
      timing["backward"] = backwardMs;
    if (gpu) {
      timing["compile"] = gpu->compileMs;
      timing["reps"] = args.reps;
      if (args.check) {
        timing["reference_forward"] = referenceForwardMs;
        if (args.backward)
          timing["reference_backward"] = referenceBackwardMs;
      }
      j["kernels"] = {{"modules", gpu->modules},
                      {"compiled", gpu->compiled},
                      {"cache_hits", gpu->cacheHits},
                      {"forward", gpu->forwardPlan},
                      {"backward", gpu->backwardPlan}};
      j["device_memory_bytes"] = {{"peak", gpu->peakBytes}, {"graph", gpu->graphBytes}, {"inputs", gpu->inputBytes}};
    }
    if (compiled)
      j["compile_only"] = {{"modules", compiled->modules},
                           {"compiled", compiled->compiled},
                           {"ms", compiled->ms},
                           {"refused", compiled->refused}};
    if (!checks.empty()) {
      nlohmann::ordered_json c = nlohmann::ordered_json::array();
      for (const CheckRow &row : checks)
        c.push_back({{"what", row.what},
                     {"name", row.name},
                     {"worst_scaled_error", row.agreement.worst},
                     {"pass", row.agreement.worst <= kCheckTolerance}});
      j["check"] = c;
    }
    j["timing_ms"] = timing;
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("layer    {} ({}), hash {}\n", info.name, info.pygClass, layer.hashHex());
  if (args.printLayer)
    fmt::print("{}", layer.print());
  fmt::print("graph    {}: {} nodes, {} edges\n", g.name(), g.numNodes(), g.numEdges());
  if (gpu) {
    fmt::print("backend  cuda ({} kernel module{}: {} compiled, {} from the cache, {:.1f} ms)\n", gpu->modules,
               gpu->modules == 1 ? "" : "s", gpu->compiled, gpu->cacheHits, gpu->compileMs);
    fmt::print("{}", indentLines("forward  ", gpu->forwardPlan));
    if (args.backward)
      fmt::print("{}", indentLines("backward ", gpu->backwardPlan));
    fmt::print("memory   peak {:.1f} MiB of device memory (graph arrays {:.1f} MiB, inputs {:.1f} MiB)\n",
               gpu->peakBytes / 1048576.0, gpu->graphBytes / 1048576.0, gpu->inputBytes / 1048576.0);
  } else if (compiled && compiled->refused.empty()) {
    fmt::print("backend  cpu (double-precision reference executor): no GPU here; {} kernel module{} generated for {} "
               "({} compiled by NVRTC, {} from the kernel cache, {:.1f} ms), not run\n",
               compiled->modules, compiled->modules == 1 ? "" : "s", runtime::targetArch(), compiled->compiled,
               compiled->modules - compiled->compiled, compiled->ms);
  } else if (compiled) {
    fmt::print("{}", indentLines("backend  ", "cpu (double-precision reference executor): no GPU here, and no "
                                               "kernels: " + compiled->refused));
  } else {
    fmt::print("backend  cpu (double-precision reference executor)\n");
  }
  fmt::print("inputs   {}\n",
             fromFiles ? "from " + args.inputsDir : fmt::format("random in [-1, 1], seed {}", args.seed));
  for (const dsl::LayerOutput &out : layer.outputs())
    printChecksumRow("output", out.name, outputs.at(out.name));
  if (args.backward)
    for (const dsl::InputPtr &in : layer.inputs())
      printChecksumRow("grad", in->name, gradients.at(in->name));
  fmt::print("time     graph {:.3f} ms, lower {:.3f} ms, forward {:.3f} ms", graphMs, lowerMs, forwardMs);
  if (args.backward)
    fmt::print(", backward {:.3f} ms", backwardMs);
  fmt::print("{}\n", gpu ? fmt::format(" (median of {} on the GPU)", args.reps) : std::string());
  if (args.check && !gpu)
    fmt::print("check    nothing to compare: the reference executor is the backend here\n");
  if (!checks.empty()) {
    bool pass = true;
    for (const CheckRow &row : checks) {
      const bool ok = row.agreement.worst <= kCheckTolerance;
      pass &= ok;
      fmt::print("check    {:<6} {:<10} worst scaled error {:.3g} vs the fp64 reference{}\n", row.what, row.name,
                 row.agreement.worst,
                 ok ? ""
                    : fmt::format("  FAIL at [{}, {}]: {} vs {}", row.agreement.row, row.agreement.col,
                                  row.agreement.actual, row.agreement.expected));
    }
    if (!pass)
      throwInternalError("the GPU result disagrees with the reference executor beyond {} (see above)", kCheckTolerance);
  }
}

} // namespace

void addRunCommand(CLI::App &app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App *cmd = app.add_subcommand("run", "Run a library layer on a graph (forward, and backward with --backward)");
  cmd->add_option("--layer", args->layer, "Library layer name (see `gnnjit layers`)")->capture_default_str();
  addGraphOptions(*cmd, args->graph, GraphArgStyle::Flag);
  cmd->add_option("--backend", args->backend,
                  "cuda (generated kernels on the GPU), cpu (the fp64 reference executor), or auto: cuda when a "
                  "GPU is present, else cpu after compiling the kernels")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--backend-variant", args->variant,
                  "SpMM aggregations: generated (the CSR kernel), cusparse, or auto (a rule on the degree "
                  "statistics)")
      ->check(CLI::IsMember({"auto", "generated", "cusparse"}))
      ->capture_default_str();
  cmd->add_flag("--check", args->check,
                "cuda: also run the fp64 reference and compare (exit 3 when a result is off by more than 1e-4 "
                "relative)");
  cmd->add_option("--reps", args->reps, "cuda: timed runs after one warm-up (the median is printed)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
      ->capture_default_str();
  addLayerOptions(*cmd, args->layerArgs);
  cmd->add_option("--seed", args->seed, "Seed of the random inputs and output gradients")->capture_default_str();
  cmd->add_flag("--backward", args->backward, "Also differentiate and run the backward plan");
  cmd->add_flag("--json", args->json, "Print one JSON object instead of text");
  cmd->add_flag("--print-layer", args->printLayer, "Print the layer's IR");
  cmd->add_option("--inputs", args->inputsDir,
                  "Read inputs (and d_<output> with --backward) from NAME.json/NAME.bin files in this folder "
                  "(format: cli/TensorFiles.h)");
  cmd->add_option("--dump", args->dumpDir, "Write outputs, gradients and generated inputs to this folder");
  cmd->callback([args] { run(*args); });
}

} // namespace gnnjit::cli
