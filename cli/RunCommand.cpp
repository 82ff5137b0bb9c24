#include "cli/RunCommand.h"

#include "autotune/PlanLayer.h"
#include "cli/CudaRun.h"
#include "cli/GraphOptions.h"
#include "cli/LayerOptionsCli.h"
#include "cli/RunPreflight.h"
#include "cli/RunReport.h"
#include "cli/RunTensors.h"
#include "cli/TensorFiles.h"
#include "exec/HostTransfer.h"
#include "exec/TensorOps.h"
#include "layers/Library.h"
#include "lower/Pipeline.h"
#include "ref/Executor.h"
#include "runtime/Device.h"
#include "runtime/KernelCache.h"
#include "support/Error.h"
#include "support/Message.h"
#include "support/Stopwatch.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
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
  bool unfusedAttentionBackward = false;
  bool tune = false; ///< tune the layer on this graph first when records are missing
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


/// The reference's results, and how long each pass took.
struct ReferenceRun {
  ref::TensorMap outputs, gradients;
  double forwardMs = 0, backwardMs = 0;
};

/// `tensors` binds the inputs and, for the backward, the output gradients;
/// those are set aside during the forward (which takes inputs only) rather
/// than copying the inputs.
ReferenceRun runReference(const lower::LoweredLayer &lowered, const graph::Graph &g, ref::TensorMap &tensors,
                          bool backward, uint64_t seed) {
  ReferenceRun r;
  std::vector<ref::TensorMap::node_type> setAside;
  for (const dsl::InputPtr &d : lowered.backward.plan.outputGradients)
    if (tensors.count(d->name))
      setAside.push_back(tensors.extract(d->name));
  Stopwatch clock;
  r.outputs = ref::forward(lowered.layer, g, tensors, seed);
  r.forwardMs = clock.ms();
  for (ref::TensorMap::node_type &node : setAside)
    tensors.insert(std::move(node));
  if (backward) {
    clock.restart();
    r.gradients = ref::backward(lowered.layer, lowered.backward.plan, g, tensors, seed);
    r.backwardMs = clock.ms();
  }
  return r;
}

/// The tensors named in `order`, host or device, with their checksums.
template <typename Map>
std::vector<NamedChecksum> checksums(const std::vector<std::string> &order, const Map &tensors) {
  std::vector<NamedChecksum> out;
  for (const std::string &name : order) {
    const auto &t = tensors.at(name);
    out.push_back({name, t.rows, t.cols, exec::checksum(t)});
  }
  return out;
}

void createFolder(const fs::path &dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throwUserError("cannot create the --dump folder '{}': {}", clipForMessage(dir.string()), ec.message());
}

void writeTensor(const fs::path &dir, const std::string &name, const ref::Tensor &t) { writeTensorFile(dir, name, t); }
void writeTensor(const fs::path &dir, const std::string &name, const exec::DeviceTensor &t) {
  writeDeviceTensorFile(dir.string(), name, t);
}

/// Writes outputs, gradients (grad_<input>) and, for random runs, the bound
/// tensors, with manifest.json listing them: host or device maps alike.
template <typename Outputs, typename Tensors>
void dump(const fs::path &dir, const RunResult &r, const Outputs &outputs, const Outputs *gradients,
          const Tensors *generated) {
  nlohmann::ordered_json manifest = {{"layer", r.info->name},
                                     {"layer_hash", r.layerHash},
                                     {"graph", r.graphName},
                                     {"nodes", r.nodes},
                                     {"edges", r.edges}};
  nlohmann::ordered_json outs = nlohmann::ordered_json::array(), grads = nlohmann::ordered_json::array(),
                         ins = nlohmann::ordered_json::array();
  for (const auto &[name, t] : outputs) {
    writeTensor(dir, name, t);
    outs.push_back(name);
  }
  if (gradients)
    for (const auto &[name, t] : *gradients) {
      writeTensor(dir, "grad_" + name, t);
      grads.push_back({{"input", name}, {"file", "grad_" + name}});
    }
  if (generated)
    for (const auto &[name, t] : *generated) {
      writeTensor(dir, name, t);
      ins.push_back(name);
    }
  manifest["outputs"] = outs;
  manifest["gradients"] = grads;
  manifest["generated_inputs"] = ins;
  std::ofstream out(dir / "manifest.json");
  out << manifest.dump(2) << "\n";
  if (!out)
    throwUserError("could not write '{}'", clipForMessage((dir / "manifest.json").string()));
}

void compareWithReference(const ReferenceRun &reference, const CudaRun &gpu, RunResult &r) {
  for (const auto &[name, t] : reference.outputs)
    r.checks.push_back({"output", name, exec::compare(t, gpu.outputs().at(name))});
  for (const auto &[name, t] : reference.gradients)
    r.checks.push_back({"grad", name, exec::compare(t, gpu.gradients().at(name))});
}

/// The passes' programs from the tuning records of this layer, graph and GPU
/// (`gnnjit tune` writes them; with --tune, written first where any stage
/// has none), where any match; the rule's otherwise, and always when the
/// rule was told to force something (--backend-variant,
/// --unfused-attention-backward). Planned in `programs`, where the
/// preflight planned the rule's.
autotune::PlannedLayer planRun(autotune::ProgramCache &programs, const graph::Graph &g, const dsl::Layer &layer,
                               const layers::LayerOptions &o, const RunArgs &args, const RunShape &shape) {
  autotune::PlanRequest request;
  request.layerHash = layer.hashHex();
  request.width = o.dim;
  request.heads = o.heads;
  request.backward = args.backward;
  request.useRecords = args.variant == "auto" && !args.unfusedAttentionBackward;
  request.tuneMissing = args.tune;
  request.rule = shape.rule;
  return autotune::planLayer(programs.lowered(), g, request, &programs);
}

void run(const RunArgs &args) {
  const bool haveGpu = runtime::hasCudaDevice();
  if (args.backend == "cuda" && !haveGpu)
    throwUserError("--backend cuda needs a CUDA device and none was found; --backend auto compiles the kernels "
                   "and runs the CPU reference instead");
  RunShape shape;
  shape.onGpu = args.backend == "cuda" || (args.backend == "auto" && haveGpu);
  if (args.tune && (args.variant != "auto" || args.unfusedAttentionBackward))
    throwUserError("--tune chooses the configs itself; it cannot be combined with --backend-variant {} or "
                   "--unfused-attention-backward",
                   args.variant);
  if (args.tune && !shape.onGpu)
    throwUserError("--tune times kernels on a CUDA device and this run has none ({}); `gnnjit tune --list` shows "
                   "the candidates without one",
                   haveGpu ? "--backend cpu" : "no device found");
  shape.backward = args.backward;
  shape.reference = !shape.onGpu || args.check;
  shape.rule.variant = autotune::parseVariant(args.variant);
  shape.rule.fuseAttentionBackward = !args.unfusedAttentionBackward;

  RunResult r;
  r.info = &layers::findLayer(args.layer);
  r.options = args.layerArgs.options(*r.info);
  const dsl::Layer layer = r.info->build(r.options);
  r.layerHash = layer.hashHex();
  if (args.printLayer)
    r.layerIr = layer.print();
  r.variant = args.variant;
  r.seed = args.seed;
  r.inputsDir = args.inputsDir;
  r.backward = args.backward;
  r.check = args.check;
  r.reps = args.reps;

  Stopwatch clock;
  const LoadedGraph loaded = loadGraph(args.graph);
  r.graphMs = clock.ms();
  const graph::Graph &g = loaded.graph;
  r.graphName = g.name();
  r.nodes = g.numNodes();
  r.edges = g.numEdges();

  clock.restart();
  const lower::LoweredLayer lowered = lower::lowerLayer(layer);
  r.lowerMs = clock.ms();

  // Nothing tensor-sized exists yet: refuse now what would not fit (the
  // rule's programs: tuning, if it runs, comes after this).
  autotune::ProgramCache programs(lowered);
  const exec::LayerPrograms rulePrograms =
      shape.onGpu ? autotune::rulePrograms(programs, autotune::graphFacts(g), shape.rule, args.backward)
                  : exec::LayerPrograms{};
  r.estimate = estimateRunMemory(lowered, g, shape, rulePrograms);
  requireRunFits(r.estimate, shape);

  const std::vector<BoundTensor> bound = boundTensors(lowered, g, args.backward);
  const TensorSource source{args.seed, args.inputsDir};
  std::vector<std::string> outputNames, inputNames;
  for (const dsl::LayerOutput &out : layer.outputs())
    outputNames.push_back(out.name);
  for (const dsl::InputPtr &in : layer.inputs())
    inputNames.push_back(in->name);
  if (!args.dumpDir.empty())
    createFolder(args.dumpDir);

  if (shape.onGpu) {
    const autotune::PlannedLayer tuned = planRun(programs, g, layer, r.options, args, shape);
    CudaRunOptions options;
    options.programs = tuned.programs;
    options.reps = args.reps;
    options.seed = args.seed;
    CudaRun gpu(lowered, g, options);
    gpu.prepare(args.backward);
    // The reference needs host copies of the inputs: read them once from
    // the files, or from the device where they were made.
    ref::TensorMap hostInputs;
    if (args.check && source.fromFiles()) {
      hostInputs = hostTensors(bound, source);
      uploadTensors(bound, hostInputs, gpu.inputs());
    } else {
      makeDeviceTensors(bound, source, gpu.inputs());
      if (args.check)
        for (const BoundTensor &t : bound)
          hostInputs[t.name] = exec::download(gpu.inputs().views().at(t.name));
    }
    gpu.run(args.backward);
    r.gpu = gpu.stats();
    r.gpu->tunedStages = tuned.stages;
    r.gpu->tuningRecordsMs = tuned.ms;
    r.gpu->tuneSeconds = tuned.tuneSeconds;
    r.gpu->recordsNote = tuned.note;
    r.forwardMs = r.gpu->forwardMs;
    r.backwardMs = r.gpu->backwardMs;
    r.outputs = checksums(outputNames, gpu.outputs());
    if (args.backward)
      r.gradients = checksums(inputNames, gpu.gradients());
    if (args.check) {
      const ReferenceRun reference = runReference(lowered, g, hostInputs, args.backward, args.seed);
      r.referenceForwardMs = reference.forwardMs;
      r.referenceBackwardMs = reference.backwardMs;
      compareWithReference(reference, gpu, r);
    }
    if (!args.dumpDir.empty())
      dump(args.dumpDir, r, gpu.outputs(), args.backward ? &gpu.gradients() : nullptr,
           source.fromFiles() ? nullptr : &gpu.inputs().views());
  } else {
    if (args.backend == "auto")
      r.compiled = compileOnly(lowered, g, args.backward, shape.rule);
    ref::TensorMap hostInputs = hostTensors(bound, source);
    const ReferenceRun reference = runReference(lowered, g, hostInputs, args.backward, args.seed);
    r.forwardMs = reference.forwardMs;
    r.backwardMs = reference.backwardMs;
    r.outputs = checksums(outputNames, reference.outputs);
    if (args.backward)
      r.gradients = checksums(inputNames, reference.gradients);
    if (!args.dumpDir.empty())
      dump(args.dumpDir, r, reference.outputs, args.backward ? &reference.gradients : nullptr,
           source.fromFiles() ? nullptr : &hostInputs);
  }

  if (args.json)
    printRunJson(r);
  else
    printRunText(r);
  if (!checksPass(r))
    throwInternalError("the GPU result disagrees with the reference executor beyond {} (see above)", kCheckTolerance);
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
  cmd->add_flag("--unfused-attention-backward", args->unfusedAttentionBackward,
                "Attention layers: the backward runs an edge loop per sum and parameter gradients (sums over all "
                "edges) over edge ranges, instead of sharing loops (the default, faster; this is for comparing)");
  cmd->add_flag("--tune", args->tune,
                "cuda: when a tunable stage has no tuning record for this layer, graph and width, tune the layer "
                "first (as `gnnjit tune`, 3 s budget) and record the winners");
  cmd->add_flag("--check", args->check,
                "cuda: also run the fp64 reference and compare (exit 3 when a result is off by more than 1e-4 "
                "relative)");
  cmd->add_option("--reps", args->reps, "cuda: timed runs after one warm-up (the median is printed)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
      ->capture_default_str();
  addLayerOptions(*cmd, args->layerArgs);
  cmd->add_option("--seed", args->seed, "Seed of the random inputs and output gradients, and of attention dropout")->capture_default_str();
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
