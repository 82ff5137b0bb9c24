#include "cli/ExportCommand.h"

#include "cli/LayerOptionsCli.h"
#include "codegen/DeviceHeaders.h"
#include "codegen/Provenance.h"
#include "codegen/Version.h"
#include "exec/KernelSource.h"
#include "exec/Program.h"
#include "exec/Tuning.h"
#include "layers/Library.h"
#include "lower/Pipeline.h"
#include "runtime/Compile.h"
#include "runtime/Device.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <limits>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>

namespace gnnjit::cli {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace {

struct ExportArgs {
  std::string layer;
  LayerOptionArgs layerArgs;
  std::string outDir;
  std::string arch{runtime::kCompileOnlyArch};
  std::string index = "int32";
  int64_t maxDegree = 32;
  int64_t medianDegree = 8;
  bool local = false;
  std::string variant = "auto";
  bool unaligned = false;
  bool backward = true; ///< --backward: the default, accepted for symmetry
  bool noBackward = false;
};

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::string_view stepKindName(exec::Step::Kind kind) {
  switch (kind) {
  case exec::Step::Kind::Spmm:
    return "spmm";
  case exec::Step::Kind::Cusparse:
    return "cusparse";
  case exec::Step::Kind::NodeSum:
    return "node_sum";
  case exec::Step::Kind::NodeOutputs:
    return "node_outputs";
  case exec::Step::Kind::GlobalOutputs:
    return "global_outputs";
  case exec::Step::Kind::Zero:
    return "zero";
  }
  return "?";
}

bool hasStage(const exec::Step &step) {
  return step.kind == exec::Step::Kind::Spmm || step.kind == exec::Step::Kind::Cusparse ||
         step.kind == exec::Step::Kind::NodeSum;
}

ordered_json orNull(const std::string &s) { return s.empty() ? ordered_json(nullptr) : ordered_json(s); }

ordered_json tuningJson(const codegen::SpmmTuning &t) {
  return {{"group", t.group},
          {"vec", t.vec},
          {"chunks", t.chunks},
          {"block", t.blockThreads},
          {"heavy_threshold", t.heavyThreshold},
          {"tile_width", t.tileWidth()},
          {"segment_length", t.segmentLength},
          {"segment_group", t.segmentGroup},
          {"segment_chunks", t.segmentChunks},
          {"segment_tile_width", t.segmentTileWidth()}};
}

ordered_json aggregateJson(const exec::Step &step) {
  if (!hasStage(step))
    return nullptr;
  const auto *agg = llvm::cast<dsl::Aggregate>(step.stage.aggregate.get());
  const std::string shape = dsl::shapeText(step.stage.aggregate->shape());
  return {
      {"text", fmt::format("aggregate[{}, {}] {}", dsl::reduceName(agg->reduce()), dsl::overName(agg->over()), shape)},
      {"reduce", dsl::reduceName(agg->reduce())},
      {"over", dsl::overName(agg->over())},
      {"shape", shape},
      {"family", lower::familyName(step.stage.family)},
      {"buffer", step.aggregate >= 0 ? ordered_json(step.aggregate) : ordered_json(nullptr)}};
}

/// The grid LayerRunner launches kernel `k` of the module of `step` with
/// (exec/StepLauncher.cpp), as a rule over the graph's sizes with this plan's
/// constants filled in.
std::string gridRule(const exec::Step &step, const codegen::GeneratedModule &module, size_t k) {
  const codegen::GeneratedKernel &kernel = module.kernels[k];
  switch (step.kind) {
  case exec::Step::Kind::Spmm: {
    const codegen::SpmmTuning &t = step.tuning;
    if (k == 0)
      return fmt::format("x: ceil(num_rows * group / block), y: ceil(F / tile_width) = {} (group={}, block={}, F={}, "
                         "tile_width={})",
                         ceilDiv(step.width, t.tileWidth()), t.group, t.blockThreads, step.width, t.tileWidth());
    const std::string y =
        fmt::format("y: ceil(F / segment_tile_width) = {}", ceilDiv(step.width, t.segmentTileWidth()));
    const std::string constants =
        fmt::format("segment_group={}, block={}, F={}, segment_tile_width={}; only when some row has more than "
                    "heavy_threshold={} edges",
                    t.segmentGroup, t.blockThreads, step.width, t.segmentTileWidth(), t.heavyThreshold);
    if (k == 1)
      return fmt::format("x: ceil(num_segments * segment_group / block), {} ({})", y, constants);
    return fmt::format("x: ceil(num_heavy_rows * segment_group / block), {} ({})", y, constants);
  }
  case exec::Step::Kind::Cusparse:
    return "x: ceil(num_rows * 32 / 256) (one warp per row; the values are built once per graph, then cuSPARSE "
           "multiplies)";
  case exec::Step::Kind::NodeSum:
    if (k == 0)
      return fmt::format("x: num_partials = min(1024, max(1, ceil(num_rows / 256))) (block={})", kernel.blockThreads);
    return fmt::format("x: ceil(F / 32) = {} (F={}, block={})", ceilDiv(step.width, 32), step.width,
                       kernel.blockThreads);
  case exec::Step::Kind::NodeOutputs:
    return fmt::format("x: ceil(num_rows * width / block) (width={}, block={})", step.width, kernel.blockThreads);
  case exec::Step::Kind::GlobalOutputs:
    return fmt::format("x: ceil(num_rows * width / block) = {} (num_rows=1, width={}, block={})",
                       ceilDiv(step.width, kernel.blockThreads), step.width, kernel.blockThreads);
  case exec::Step::Kind::Zero:
    break;
  }
  throwInternalError("no launch rule for a {} step", stepKindName(step.kind));
}

ordered_json passJson(const exec::Program &program) {
  ordered_json steps = ordered_json::array();
  for (const exec::Step &step : program.steps) {
    const bool generated = step.kind == exec::Step::Kind::Spmm;
    steps.push_back({{"kind", stepKindName(step.kind)},
                     {"aggregate", aggregateJson(step)},
                     {"target", orNull(step.target)},
                     {"variant", step.kind == exec::Step::Kind::Cusparse ? ordered_json("cusparse")
                                 : step.kind == exec::Step::Kind::Zero   ? ordered_json(nullptr)
                                                                         : ordered_json("generated")},
                     {"tuning", generated ? tuningJson(step.tuning) : ordered_json(nullptr)},
                     {"module", step.module >= 0 ? ordered_json(program.modules[static_cast<size_t>(step.module)].name)
                                                 : ordered_json(nullptr)},
                     {"width", step.width},
                     {"gathered", orNull(step.gathered)}});
  }
  ordered_json targets = ordered_json::array();
  for (const exec::Target &t : program.targets)
    targets.push_back({{"name", t.name}, {"width", t.width}, {"global", t.global}, {"zero", !t.value}});
  ordered_json aggregates = ordered_json::array();
  for (size_t k = 0; k < program.aggregateWidths.size(); ++k)
    aggregates.push_back({{"index", k},
                          {"width", program.aggregateWidths[k]},
                          {"global", static_cast<bool>(program.aggregateGlobal[k])}});
  return {{"steps", steps}, {"targets", targets}, {"aggregates", aggregates}, {"describe", program.describe()}};
}

/// Writes `text` to `path`, creating its folder; a UserError naming the path
/// on any failure.
void writeText(const fs::path &path, std::string_view text) {
  std::error_code ec;
  if (path.has_parent_path()) {
    fs::create_directories(path.parent_path(), ec);
    if (ec)
      throwUserError("cannot create the folder '{}': {}", path.parent_path().string(), ec.message());
  }
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    throwUserError("cannot write '{}': {}", path.string(), errno ? std::strerror(errno) : "cannot open it");
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out)
    throwUserError("could not write all of '{}'", path.string());
}

void createOutDir(const fs::path &dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throwUserError("--out '{}' exists and is not a folder", dir.string());
  fs::create_directories(dir, ec);
  if (ec)
    throwUserError("cannot create the --out folder '{}': {}", dir.string(), ec.message());
  if (!fs::is_directory(dir, ec))
    throwUserError("cannot create the --out folder '{}'", dir.string());
}

struct PlannedPass {
  std::string key; ///< "forward" or "backward"
  exec::Program program;
};

void run(const ExportArgs &args) {
  const layers::LayerInfo &info = layers::findLayer(args.layer);
  const layers::LayerOptions options = args.layerArgs.options(info);
  const dsl::Layer layer = info.build(options);
  const lower::LoweredLayer lowered = lower::lowerLayer(layer);
  const std::string arch = runtime::targetArch(args.arch);
  const exec::Variant variant = exec::parseVariant(args.variant);
  const codegen::IndexWidth index = args.index == "int64" ? codegen::IndexWidth::I64 : codegen::IndexWidth::I32;

  // Plan every pass first: a refusal leaves nothing behind.
  // There is no graph to measure: the tuning rule sees rows of
  // --median-degree edges (mean and median) up to --max-degree.
  graph::DegreeSummary degrees;
  const int64_t median = std::min(args.medianDegree, args.maxDegree);
  degrees.min = degrees.p50 = degrees.p90 = degrees.p99 = degrees.p999 = median;
  degrees.max = args.maxDegree;
  degrees.mean = static_cast<double>(median);
  exec::GraphFacts facts;
  facts.index = index;
  facts.weighted = args.layerArgs.weighted;
  facts.in = facts.out = &degrees;
  facts.local = args.local;
  const exec::ProgramConfig config = exec::ruleConfig(facts, {variant, !args.unaligned});
  std::vector<PlannedPass> passes;
  passes.push_back({"forward", exec::planProgram(lowered, exec::Pass::Forward, config)});
  if (!args.noBackward)
    passes.push_back({"backward", exec::planProgram(lowered, exec::Pass::Backward, config)});

  // Which step launches each module (one step per module).
  struct ModuleUse {
    const exec::Program *program;
    const exec::Step *step;
    const codegen::GeneratedModule *module;
  };
  std::vector<ModuleUse> uses;
  for (const PlannedPass &p : passes)
    for (const exec::Step &step : p.program.steps)
      if (step.module >= 0)
        uses.push_back({&p.program, &step, &p.program.modules[static_cast<size_t>(step.module)]});

  // PTX, before anything is written.
  runtime::CompileOptions compileOptions;
  compileOptions.arch = arch;
  std::vector<std::string> ptx;
  for (const ModuleUse &use : uses)
    ptx.push_back(runtime::compileToCubin(exec::kernelSource(*use.module), compileOptions).ptx);

  const fs::path dir = args.outDir;
  createOutDir(dir);
  std::vector<std::string> written;
  for (const codegen::DeviceHeader &h : codegen::deviceHeaders()) {
    writeText(dir / fs::path(std::string(h.name)), h.text);
    written.emplace_back(h.name);
  }

  ordered_json modules = ordered_json::array();
  std::vector<std::string> kernelLines;
  for (size_t m = 0; m < uses.size(); ++m) {
    const codegen::GeneratedModule &module = *uses[m].module;
    const std::string cu = module.name + ".cu", ptxFile = module.name + ".ptx";
    writeText(dir / cu, module.source);
    writeText(dir / ptxFile, ptx[m]);
    written.push_back(cu);
    written.push_back(ptxFile);
    ordered_json kernels = ordered_json::array();
    for (size_t k = 0; k < module.kernels.size(); ++k) {
      const codegen::GeneratedKernel &kernel = module.kernels[k];
      ordered_json params = ordered_json::array();
      for (const codegen::KernelParam &p : kernel.params)
        params.push_back(
            {{"name", p.name}, {"kind", codegen::paramKindName(p.kind)}, {"ref", p.ref}, {"ctype", p.ctype}});
      const std::string grid = gridRule(*uses[m].step, module, k);
      kernels.push_back(
          {{"entry", kernel.entry}, {"block_threads", kernel.blockThreads}, {"params", params}, {"grid", grid}});
      kernelLines.push_back(fmt::format("  {:<3} {:<40} block {:<4} grid {}", exec::passName(uses[m].program->pass),
                                        kernel.entry, kernel.blockThreads, grid));
    }
    modules.push_back({{"name", module.name},
                       {"pass", exec::passName(uses[m].program->pass)},
                       {"file", cu},
                       {"ptx", ptxFile},
                       {"sha256", codegen::sha256Hex(module.source)},
                       {"kernels", kernels}});
  }

  ordered_json passesJson = ordered_json::object();
  for (const PlannedPass &p : passes)
    passesJson[p.key] = passJson(p.program);
  const ordered_json plan = {
      {"layer", info.name},
      {"layer_hash", layer.hashHex()},
      {"family", lower::familyName(lowered.family())},
      {"arch", arch},
      {"index", args.index},
      {"weighted", args.layerArgs.weighted},
      {"variant", exec::variantName(variant)},
      {"max_degree", args.maxDegree},
      {"aligned", !args.unaligned},
      {"options",
       {{"dim", options.dim},
        {"heads", options.heads},
        {"concat", options.concat},
        {"aggregation", options.aggregation},
        {"negative_slope", options.negativeSlope},
        {"train_eps", options.trainEps},
        {"eps", options.eps},
        {"weighted", options.weighted},
        {"edge_features", options.edgeFeatures}}},
      {"generator", codegen::kGeneratorVersion},
      {"device_headers_sha256", codegen::deviceHeadersHash()},
      {"nvrtc", runtime::nvrtcVersionString()},
      {"grid_terms",
       {{"num_rows", "rows of the CSR the kernel walks: the graph's nodes (1 for global outputs)"},
        {"num_segments", "heavy-row segments: sum over rows with more than heavy_threshold edges of "
                         "ceil(degree / segment_length)"},
        {"num_heavy_rows", "rows with more than heavy_threshold edges"},
        {"F", "floats per aggregated row"},
        {"width", "floats per row of the widest output of the kernel"}}},
      {"passes", passesJson},
      {"modules", modules},
  };
  writeText(dir / "plan.json", plan.dump(2) + "\n");
  written.emplace_back("plan.json");

  fmt::print("exported {} ({}, family {}) for {}, {} indices{}, max degree {}: {} files in {}\n", info.name,
             layer.hashHex().substr(0, 16), lower::familyName(lowered.family()), arch, args.index,
             args.layerArgs.weighted ? ", weighted" : "", args.maxDegree, written.size(), dir.string());
  fmt::print("  {} modules (.cu + .ptx), {} device headers under gnnjit/, plan.json\n", uses.size(),
             codegen::deviceHeaders().size());
  fmt::print("kernels (pass, entry, block, grid):\n");
  for (const std::string &line : kernelLines)
    fmt::print("{}\n", line);
}

} // namespace

void addExportCommand(CLI::App &app) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App *cmd = app.add_subcommand(
      "export",
      "Write a layer's generated CUDA modules, device headers, PTX and plan.json to a folder (no GPU needed)");
  cmd->add_option("--layer", args->layer, "Library layer name (see `gnnjit layers`)")->required();
  addLayerOptions(*cmd, args->layerArgs,
                  "The graph has edge weights: kernels read them, and gcn and graphconv multiply messages by them "
                  "(as `run --weighted`)");
  cmd->add_option("--out", args->outDir, "Folder to write into (created if missing)")->required();
  cmd->add_option("--arch", args->arch, "GPU architecture of the PTX, sm_NN or sm_NNa")->capture_default_str();
  cmd->add_option("--index", args->index, "CSR index type of the graph: int32 or int64")
      ->check(CLI::IsMember({"int32", "int64"}))
      ->capture_default_str();
  cmd->add_option("--max-degree", args->maxDegree,
                  "Longest row the tuning rule sees; rows above its heavy-row threshold (128, or 4x the median "
                  "degree, or 8x the group with --local) give SpMM modules segment and combine entries")
      ->check(CLI::Range(int64_t{0}, std::numeric_limits<int64_t>::max()))
      ->capture_default_str();
  cmd->add_option("--median-degree", args->medianDegree,
                  "Typical row length the tuning rule sees (capped at --max-degree)")
      ->check(CLI::Range(int64_t{0}, std::numeric_limits<int64_t>::max()))
      ->capture_default_str();
  cmd->add_flag("--local", args->local,
                "Plan for a graph whose neighbours have close ids (meshes, grids): small groups for short rows");
  cmd->add_option("--variant", args->variant,
                  "SpMM aggregations: auto (the tuning rule), generated, or cusparse (where cuSPARSE can run them)")
      ->check(CLI::IsMember({"auto", "generated", "cusparse"}))
      ->capture_default_str();
  cmd->add_flag("--unaligned", args->unaligned,
                "Plan for node inputs whose rows do not allow 16-byte vector loads (scalar gathers)");
  CLI::Option *backward =
      cmd->add_flag("--backward", args->backward, "Also plan and export the backward pass (the default)");
  cmd->add_flag("--no-backward", args->noBackward, "Forward pass only")->excludes(backward);
  cmd->callback([args] { run(*args); });
}

} // namespace gnnjit::cli
