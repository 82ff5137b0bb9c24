#include "cli/ExportCommand.h"

#include "cli/LayerOptionsCli.h"
#include "codegen/DeviceHeaders.h"
#include "autotune/KernelExport.h"
#include "layers/Library.h"
#include "runtime/Device.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <limits>
#include <memory>

namespace gnnjit::cli {

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
  bool unfusedAttentionBackward = false;
  bool backward = true; ///< --backward: the default, accepted for symmetry
  bool noBackward = false;
};

void run(const ExportArgs &args) {
  const layers::LayerInfo &info = layers::findLayer(args.layer);
  const layers::LayerOptions options = args.layerArgs.options(info);
  const dsl::Layer layer = info.build(options);
  autotune::ExportSettings settings;
  settings.arch = args.arch;
  settings.index = args.index == "int64" ? lower::IndexWidth::I64 : lower::IndexWidth::I32;
  settings.weighted = args.layerArgs.weighted;
  settings.medianDegree = args.medianDegree;
  settings.maxDegree = args.maxDegree;
  settings.local = args.local;
  settings.variant = autotune::parseVariant(args.variant);
  settings.aligned = !args.unaligned;
  settings.fuseAttentionBackward = !args.unfusedAttentionBackward;
  settings.backward = !args.noBackward;
  const nlohmann::ordered_json optionsJson = {{"dim", options.dim},
                                              {"heads", options.heads},
                                              {"concat", options.concat},
                                              {"aggregation", options.aggregation},
                                              {"negative_slope", options.negativeSlope},
                                              {"train_eps", options.trainEps},
                                              {"eps", options.eps},
                                              {"weighted", options.weighted},
                                              {"edge_features", options.edgeFeatures},
                                              {"attention_dropout", options.attentionDropout},
                                              {"bipartite", options.bipartite}};
  const autotune::ExportSummary summary = autotune::exportKernels(layer, settings, args.outDir, optionsJson);

  fmt::print("exported {} ({}, family {}) for {}, {} indices{}, max degree {}: {} files in {}\n", info.name,
             layer.hashHex().substr(0, 16), summary.family, summary.arch,
             args.index, args.layerArgs.weighted ? ", weighted" : "", args.maxDegree, summary.files.size(),
             args.outDir);
  fmt::print("  {} modules (.cu + .ptx), {} device headers under gnnjit/, plan.json\n", summary.modules,
             codegen::deviceHeaders().size());
  fmt::print("kernels (pass, entry, block, grid):\n");
  for (const std::string &line : summary.kernelLines)
    fmt::print("  {}\n", line);
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
                  "degree, or 8x the group with --local; attention rows of 512 floats or more: 32, or 2x the "
                  "median) give the modules segment and combine entries")
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
  cmd->add_flag("--unfused-attention-backward", args->unfusedAttentionBackward,
                "Attention layers: plan the backward with an edge loop per sum and parameter gradients over edge "
                "ranges (as `run --unfused-attention-backward`)");
  cmd->add_flag("--unaligned", args->unaligned,
                "Plan for node inputs whose rows do not allow 16-byte vector loads (scalar gathers)");
  CLI::Option *backward =
      cmd->add_flag("--backward", args->backward, "Also plan and export the backward pass (the default)");
  cmd->add_flag("--no-backward", args->noBackward, "Forward pass only")->excludes(backward);
  cmd->callback([args] { run(*args); });
}

} // namespace gnnjit::cli
