#include "cli/RunCommand.h"

#include "cli/GraphOptions.h"
#include "cli/LayerOptionsCli.h"
#include "dsl/Differentiate.h"
#include "layers/Library.h"
#include "ref/Bindings.h"
#include "ref/Executor.h"
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

// ---- tensor files -------------------------------------------------------------

namespace {

void swapBytesIfBigEndian(std::vector<double> &values) {
  if constexpr (std::endian::native == std::endian::big) {
    for (double &v : values) {
      unsigned char b[sizeof(double)];
      std::memcpy(b, &v, sizeof b);
      std::reverse(b, b + sizeof b);
      std::memcpy(&v, b, sizeof b);
    }
  }
}

} // namespace

ref::Tensor readTensorFile(const fs::path &dir, const std::string &name) {
  const fs::path header = dir / (name + ".json"), data = dir / (name + ".bin");
  std::ifstream headerIn(header);
  if (!headerIn)
    throwUserError("cannot read '{}': every input needs NAME.json and NAME.bin in the --inputs folder",
                   header.string());
  nlohmann::json j;
  try {
    headerIn >> j;
  } catch (const nlohmann::json::exception &e) {
    throwUserError("'{}' is not valid JSON: {}", header.string(), e.what());
  }
  if (!j.is_object() || !j.contains("rows") || !j.contains("cols") || !j["rows"].is_number_integer() ||
      !j["cols"].is_number_integer())
    throwUserError("'{}' must be an object with integer \"rows\" and \"cols\"", header.string());
  if (j.value("dtype", std::string("float64")) != "float64")
    throwUserError("'{}': dtype must be \"float64\"", header.string());
  if (j.value("byte_order", std::string("little")) != "little")
    throwUserError("'{}': byte_order must be \"little\"", header.string());
  const int64_t rows = j["rows"], cols = j["cols"];
  if (rows < 0 || cols < 0)
    throwUserError("'{}': rows and cols must not be negative", header.string());
  std::ifstream in(data, std::ios::binary);
  if (!in)
    throwUserError("cannot read '{}'", data.string());
  std::error_code ec;
  const auto bytes = fs::file_size(data, ec);
  const uint64_t want = static_cast<uint64_t>(rows) * static_cast<uint64_t>(cols) * sizeof(double);
  if (ec || bytes != want)
    throwUserError("'{}' holds {} bytes, but {} x {} float64 values are {} bytes", data.string(), ec ? 0 : bytes, rows,
                   cols, want);
  ref::Tensor t(rows, cols);
  in.read(reinterpret_cast<char *>(t.values.data()), static_cast<std::streamsize>(want));
  if (!in)
    throwUserError("could not read all of '{}'", data.string());
  swapBytesIfBigEndian(t.values);
  return t;
}

void writeTensorFile(const fs::path &dir, const std::string &name, const ref::Tensor &tensor) {
  const nlohmann::ordered_json j = {
      {"rows", tensor.rows}, {"cols", tensor.cols}, {"dtype", "float64"}, {"byte_order", "little"}};
  std::ofstream(dir / (name + ".json")) << j.dump() << "\n";
  std::vector<double> values = tensor.values;
  swapBytesIfBigEndian(values);
  std::ofstream out(dir / (name + ".bin"), std::ios::binary);
  out.write(reinterpret_cast<const char *>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(double)));
  if (!out)
    throwUserError("could not write '{}'", (dir / (name + ".bin")).string());
}

// ---- the command ----------------------------------------------------------------

namespace {

struct RunArgs {
  std::string layer;
  GraphArgs graph;
  std::string backend = "cpu";
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
  return {{key, name},          {"rows", t.rows},     {"cols", t.cols},          {"sum", c.sum},
          {"sum_sq", c.sumSq}, {"max_abs", c.maxAbs}, {"non_finite", c.nonFinite}};
}

void printChecksumRow(std::string_view label, const std::string &name, const ref::Tensor &t) {
  const Checksum c = checksum(t);
  fmt::print("{:<8} {:<10} [{} x {}]  sum {:.12g}  sum_sq {:.12g}  max_abs {:.12g}{}\n", label, name, t.rows, t.cols,
             c.sum, c.sumSq, c.maxAbs, c.nonFinite ? fmt::format("  NON-FINITE {}", c.nonFinite) : "");
}

void run(const RunArgs &args) {
  if (args.backend == "cuda")
    throwUserError("the CUDA backend is not built yet (lowering, code generation and the JIT runtime are later "
                   "milestones); use --backend cpu, the double-precision reference executor");
  if (args.backend != "cpu")
    throwUserError("unknown backend '{}'; use cpu", args.backend);

  const layers::LayerInfo &info = layers::findLayer(args.layer);
  const layers::LayerOptions options = args.layerArgs.options();
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
  const ref::TensorMap outputs = ref::forward(layer, g, inputs);
  const double forwardMs = msSince(start);

  ref::TensorMap gradients, outputGradients;
  double differentiateMs = 0, backwardMs = 0;
  if (args.backward) {
    start = Clock::now();
    const dsl::BackwardPlan plan = dsl::differentiate(layer);
    differentiateMs = msSince(start);
    ref::TensorMap backwardInputs = inputs;
    for (size_t k = 0; k < plan.outputGradients.size(); ++k) {
      const dsl::InputDecl &d = *plan.outputGradients[k];
      const int64_t rows = g.numNodes(), cols = d.shape.size();
      ref::Tensor t = fromFiles ? loadChecked(args.inputsDir, d.name, rows, cols, "output gradient")
                                : randomTensor(rows, cols, base.fork(1000 + k));
      outputGradients[d.name] = t;
      backwardInputs[d.name] = std::move(t);
    }
    start = Clock::now();
    gradients = ref::backward(layer, plan, g, backwardInputs);
    backwardMs = msSince(start);
  }

  // Dump.
  if (!args.dumpDir.empty()) {
    const fs::path dir = args.dumpDir;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec)
      throwUserError("cannot create the --dump folder '{}': {}", dir.string(), ec.message());
    nlohmann::ordered_json manifest = {{"layer", info.name}, {"layer_hash", layer.hashHex()}, {"graph", g.name()},
                                       {"nodes", g.numNodes()}, {"edges", g.numEdges()}};
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
        {"backend", args.backend},
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
    nlohmann::ordered_json timing = {{"graph_load", graphMs}, {"forward", forwardMs}};
    if (args.backward) {
      timing["differentiate"] = differentiateMs;
      timing["backward"] = backwardMs;
    }
    j["timing_ms"] = timing;
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("layer    {} ({}), hash {}\n", info.name, info.pygClass, layer.hashHex());
  if (args.printLayer)
    fmt::print("{}", layer.print());
  fmt::print("graph    {}: {} nodes, {} edges\n", g.name(), g.numNodes(), g.numEdges());
  fmt::print("backend  cpu (double-precision reference executor)\n");
  fmt::print("inputs   {}\n", fromFiles ? "from " + args.inputsDir : fmt::format("random in [-1, 1], seed {}", args.seed));
  for (const dsl::LayerOutput &out : layer.outputs())
    printChecksumRow("output", out.name, outputs.at(out.name));
  if (args.backward)
    for (const dsl::InputPtr &in : layer.inputs())
      printChecksumRow("grad", in->name, gradients.at(in->name));
  fmt::print("time     graph {:.3f} ms, forward {:.3f} ms", graphMs, forwardMs);
  if (args.backward)
    fmt::print(", differentiate {:.3f} ms, backward {:.3f} ms", differentiateMs, backwardMs);
  fmt::print("\n");
}

} // namespace

void addRunCommand(CLI::App &app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App *cmd = app.add_subcommand("run", "Run a library layer on a graph (forward, and backward with --backward)");
  cmd->add_option("--layer", args->layer, "Library layer name (see `gnnjit layers`)")->required();
  addGraphOptions(*cmd, args->graph, GraphArgStyle::Flag);
  cmd->add_option("--backend", args->backend, "cpu (the fp64 reference executor); cuda is not built yet")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  addLayerOptions(*cmd, args->layerArgs);
  cmd->add_option("--seed", args->seed, "Seed of the random inputs and output gradients")->capture_default_str();
  cmd->add_flag("--backward", args->backward, "Also differentiate and run the backward plan");
  cmd->add_flag("--json", args->json, "Print one JSON object instead of text");
  cmd->add_flag("--print-layer", args->printLayer, "Print the layer's IR");
  cmd->add_option("--inputs", args->inputsDir,
                  "Read inputs (and d_<output> with --backward) from NAME.json/NAME.bin files in this folder "
                  "(format: cli/RunCommand.h)");
  cmd->add_option("--dump", args->dumpDir, "Write outputs, gradients and generated inputs to this folder");
  cmd->callback([args] { run(*args); });
}

} // namespace gnnjit::cli
