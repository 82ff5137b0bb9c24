#include "autotune/KernelExport.h"

#include "codegen/DeviceHeaders.h"
#include "codegen/Program.h"
#include "codegen/Provenance.h"
#include "codegen/Version.h"
#include "exec/KernelSource.h"
#include "lower/KernelPlan.h"
#include "lower/Pipeline.h"
#include "runtime/Compile.h"
#include "runtime/Device.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace gnnjit::autotune {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace {

ordered_json orNull(const std::string &s) { return s.empty() ? ordered_json(nullptr) : ordered_json(s); }

ordered_json tuningJson(const lower::RowTiling &t) {
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

ordered_json aggregateJson(const lower::AggregationStage &stage, int buffer) {
  const auto *agg = llvm::cast<dsl::Aggregate>(stage.aggregate.get());
  const std::string shape = dsl::shapeText(stage.aggregate->shape());
  return {
      {"text", fmt::format("aggregate[{}, {}] {}", dsl::reduceName(agg->reduce()), dsl::overName(agg->over()), shape)},
      {"reduce", dsl::reduceName(agg->reduce())},
      {"over", dsl::overName(agg->over())},
      {"shape", shape},
      {"family", lower::familyName(stage.family)},
      {"buffer", buffer >= 0 ? ordered_json(buffer) : ordered_json(nullptr)}};
}

/// A tiled step's merge of heavy-row segments (lower::SegmentMerge), or
/// null when its tiling splits no row.
ordered_json mergeJson(const lower::RowTiling &t, const lower::SegmentMerge &m) {
  if (t.heavyThreshold == 0)
    return nullptr;
  using Kind = lower::SegmentMerge::Kind;
  const char *kind = m.kind == Kind::Partials           ? "partials"
                     : m.kind == Kind::PartialsWithArgs ? "partials_with_args"
                     : m.kind == Kind::PackedMax        ? "packed_max"
                                                        : "packed_min";
  ordered_json j = {{"kind", kind}, {m.packed() ? "slots_per_heavy_row" : "floats_per_segment", m.perUnit}};
  if (m.packed())
    j["fill_byte"] = m.fill;
  return j;
}

/// One step of plan.json; `module` is the step's module name, or empty.
struct StepJson {
  const std::string &module;
  ordered_json base(const char *kind, ordered_json aggregate, const std::string &target, ordered_json variant,
                    ordered_json tuning, int64_t width, const std::string &gathered = {}) const {
    return {{"kind", kind},       {"aggregate", std::move(aggregate)}, {"target", orNull(target)},
            {"variant", variant}, {"tuning", std::move(tuning)},       {"module", orNull(module)},
            {"width", width},     {"gathered", orNull(gathered)}};
  }
  ordered_json operator()(const lower::SpmmStep &s) const {
    ordered_json j =
        base(s.cusparse() ? "cusparse" : "spmm", aggregateJson(s.stage, s.aggregate), s.target,
             s.cusparse() ? "cusparse" : "generated", s.cusparse() ? ordered_json(nullptr) : tuningJson(s.config),
             s.stage.aggregate->shape().size(), s.gathered);
    j["heavy_row_merge"] = s.cusparse() ? ordered_json(nullptr) : mergeJson(s.config, s.merge);
    return j;
  }
  ordered_json operator()(const lower::ReductionStep &s) const {
    ordered_json j = base("reduction", aggregateJson(s.stage, s.aggregate), s.target, "generated", tuningJson(s.config),
                          s.stage.aggregate->shape().size());
    j["saved_args"] = orNull(s.savedArgs);
    j["heavy_row_merge"] = mergeJson(s.config, s.merge);
    return j;
  }
  ordered_json operator()(const lower::ArgScatterStep &s) const {
    ordered_json j = base("arg_scatter", aggregateJson(s.stage, s.aggregate), s.target, "generated", nullptr,
                          s.stage.aggregate->shape().size());
    j["saved_args"] = s.savedArgs;
    return j;
  }
  ordered_json operator()(const lower::AttentionStep &s) const {
    using Mode = lower::AttentionStep::Mode;
    const char *mode = s.mode == Mode::Softmax ? "softmax"
                       : s.mode == Mode::Sum   ? "sum"
                       : s.mode == Mode::EdgeSum ? "edge_sum"
                                                 : "head_sums";
    ordered_json tuning = tuningJson(s.config);
    tuning["range_edges"] = s.config.rangeEdges;
    if (s.config.paddedDim > 0)
      tuning["padded_head_dim"] = s.config.paddedDim;
    ordered_json aggregate = nullptr;
    std::string target;
    if (!s.outputs.empty()) { // the first; the others under "also"
      aggregate = aggregateJson(s.outputs[0].stage, s.outputs[0].aggregate);
      target = s.outputs[0].target;
    }
    ordered_json j = base("attention", std::move(aggregate), target, "generated", std::move(tuning), s.laneWidth());
    if (s.outputs.size() > 1) {
      ordered_json also = ordered_json::array();
      for (size_t k = 1; k < s.outputs.size(); ++k)
        also.push_back({{"aggregate", aggregateJson(s.outputs[k].stage, s.outputs[k].aggregate)},
                        {"target", orNull(s.outputs[k].target)}});
      j["also"] = std::move(also);
    }
    if (s.mode == Mode::HeadSums) {
      ordered_json sums = ordered_json::array();
      for (const auto &[sum, scratch] : s.headSums)
        sums.push_back({{"shape", dsl::shapeText(sum->shape())}, {"buffer", scratch}});
      j["head_sums"] = std::move(sums);
    }
    j["mode"] = mode;
    j["direction"] = s.direction == lower::Direction::In ? "in" : "out";
    j["saved_lse"] = orNull(s.savedLse);
    j["saved_value"] = orNull(s.savedValue);
    j["heavy_row_merge"] = s.mode == Mode::Softmax || s.mode == Mode::Sum ? mergeJson(s.config, s.merge) : nullptr;
    return j;
  }
  ordered_json operator()(const lower::NodeSumStep &s) const {
    return base("node_sum", aggregateJson(s.stage, s.aggregate), "", "generated", nullptr,
                s.stage.aggregate->shape().size());
  }
  ordered_json operator()(const lower::EdgeSumStep &s) const {
    return base("edge_sum", aggregateJson(s.stage, s.aggregate), "", "generated", nullptr,
                s.stage.aggregate->shape().size());
  }
  ordered_json operator()(const lower::EdgeOutputsStep &s) const {
    return base("edge_outputs", nullptr, "", "generated", nullptr, s.width);
  }
  ordered_json operator()(const lower::NodeOutputsStep &s) const {
    return base(s.global ? "global_outputs" : "node_outputs", nullptr, "", "generated", nullptr, s.width);
  }
  ordered_json operator()(const lower::ZeroStep &s) const {
    return base("zero", nullptr, s.target, nullptr, nullptr, 0);
  }
};

ordered_json passJson(const codegen::Program &program) {
  const lower::PassPlan &plan = program.plan;
  ordered_json steps = ordered_json::array();
  for (size_t k = 0; k < plan.steps.size(); ++k) {
    const codegen::GeneratedModule *module = program.moduleOf(k);
    const std::string name = module ? module->name : std::string();
    steps.push_back(std::visit(StepJson{name}, plan.steps[k]));
  }
  ordered_json targets = ordered_json::array();
  for (const lower::Target &t : plan.targets)
    targets.push_back(
        {{"name", t.name}, {"width", t.width}, {"global", t.global}, {"per_edge", t.perEdge}, {"zero", !t.value}});
  ordered_json aggregates = ordered_json::array();
  for (size_t k = 0; k < plan.scratch.size(); ++k)
    aggregates.push_back({{"index", k}, {"width", plan.scratch[k].width}, {"global", plan.scratch[k].global}});
  ordered_json saved = ordered_json::array();
  for (const lower::SavedBuffer &b : plan.saved)
    saved.push_back({{"name", b.name},
                     {"width", b.width},
                     {"per_edge", b.perEdge},
                     {"positions", b.positions},
                     {"alias_of", orNull(b.aliasOf)}});
  return {{"steps", steps},
          {"targets", targets},
          {"aggregates", aggregates},
          {"saved", saved},
          {"row_edge_limit", plan.rowEdgeLimit > 0 ? ordered_json(plan.rowEdgeLimit) : ordered_json(nullptr)},
          {"describe", program.describe()}};
}

/// The launch rules of a step's kernels.
const std::vector<lower::KernelEntry> &entriesOf(const lower::Step &step) {
  static const std::vector<lower::KernelEntry> none;
  return std::visit(
      [](const auto &s) -> const std::vector<lower::KernelEntry> & {
        if constexpr (requires { s.kernels; })
          return s.kernels;
        else
          return none;
      },
      step);
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
    throwUserError("folder '{}' exists and is not a folder", dir.string());
  fs::create_directories(dir, ec);
  if (ec)
    throwUserError("cannot create the folder '{}': {}", dir.string(), ec.message());
  if (!fs::is_directory(dir, ec))
    throwUserError("cannot create the folder '{}'", dir.string());
}

struct PlannedPass {
  std::string key; ///< "forward" or "backward"
  codegen::Program program;
};

} // namespace

ExportSummary exportKernels(const dsl::Layer &layer, const ExportSettings &settings, const fs::path &dir,
                            const ordered_json &options) {
  const lower::LoweredLayer lowered = lower::lowerLayer(layer);
  ExportSummary summary;
  summary.family = lower::familyName(lowered.family());
  summary.arch = runtime::targetArch(settings.arch);

  // Plan every pass first: a refusal leaves nothing behind.
  // There is no graph to measure: the tuning rule sees rows of
  // medianDegree edges (mean and median) up to maxDegree.
  const int64_t median = std::min(settings.medianDegree, settings.maxDegree);
  const GraphFacts facts = assumedFacts(median, settings.maxDegree, settings.index, settings.weighted, settings.local);
  RuleOptions rule{settings.variant, settings.aligned};
  rule.fuseAttentionBackward = settings.fuseAttentionBackward;
  std::vector<PlannedPass> passes;
  for (lower::Pass pass : {lower::Pass::Forward, lower::Pass::Backward}) {
    if (pass == lower::Pass::Backward && !settings.backward)
      break;
    passes.push_back({pass == lower::Pass::Forward ? "forward" : "backward",
                      codegen::planProgram(lowered, pass, ruleConfig(lowered, pass, facts, rule))});
  }

  // Which step launches each module (one step per module).
  struct ModuleUse {
    const codegen::Program *program;
    const lower::Step *step;
    const codegen::GeneratedModule *module;
  };
  std::vector<ModuleUse> uses;
  for (const PlannedPass &p : passes)
    for (size_t k = 0; k < p.program.plan.steps.size(); ++k)
      if (const codegen::GeneratedModule *module = p.program.moduleOf(k))
        uses.push_back({&p.program, &p.program.plan.steps[k], module});

  // PTX, before anything is written.
  runtime::KernelCache &cache = settings.cache ? *settings.cache : exec::defaultKernelCache();
  runtime::CompileOptions compileOptions;
  compileOptions.arch = summary.arch;
  std::vector<std::string> ptx;
  for (const ModuleUse &use : uses)
    ptx.push_back(cache.compile(exec::kernelSource(*use.module), compileOptions)->ptx);

  createOutDir(dir);
  for (const codegen::DeviceHeader &h : codegen::deviceHeaders()) {
    writeText(dir / fs::path(std::string(h.name)), h.text);
    summary.files.emplace_back(h.name);
  }

  ordered_json modules = ordered_json::array();
  for (size_t m = 0; m < uses.size(); ++m) {
    const codegen::GeneratedModule &module = *uses[m].module;
    const std::string cu = module.name + ".cu", ptxFile = module.name + ".ptx";
    writeText(dir / cu, module.source);
    writeText(dir / ptxFile, ptx[m]);
    summary.files.push_back(cu);
    summary.files.push_back(ptxFile);
    ordered_json kernels = ordered_json::array();
    for (size_t k = 0; k < module.kernels.size(); ++k) {
      const codegen::GeneratedKernel &kernel = module.kernels[k];
      ordered_json params = ordered_json::array();
      for (const codegen::KernelParam &p : kernel.params)
        params.push_back(
            {{"name", p.name}, {"kind", codegen::paramKindName(p.kind)}, {"ref", p.scratch >= 0 ? std::to_string(p.scratch) : p.ref}, {"ctype", p.ctype}});
      const std::string grid = entriesOf(*uses[m].step).at(k).launch.describe();
      kernels.push_back({{"entry", kernel.entry},
                         {"role", lower::kernelRoleName(entriesOf(*uses[m].step).at(k).role)},
                         {"block_threads", kernel.blockThreads},
                         {"params", params},
                         {"grid", grid}});
      summary.kernelLines.push_back(fmt::format("{:<3} {:<40} block {:<4} grid {}",
                                                lower::passName(uses[m].program->plan.pass), kernel.entry,
                                                kernel.blockThreads, grid));
    }
    modules.push_back({{"name", module.name},
                       {"pass", lower::passName(uses[m].program->plan.pass)},
                       {"file", cu},
                       {"ptx", ptxFile},
                       {"sha256", codegen::sha256Hex(module.source)},
                       {"kernels", kernels}});
  }
  summary.modules = uses.size();

  ordered_json passesJson = ordered_json::object();
  for (const PlannedPass &p : passes)
    passesJson[p.key] = passJson(p.program);
  const ordered_json plan = {
      {"layer", layer.name()},
      {"layer_hash", layer.hashHex()},
      {"family", summary.family},
      {"arch", summary.arch},
      {"index", settings.index == lower::IndexWidth::I64 ? "int64" : "int32"},
      {"weighted", settings.weighted},
      {"variant", variantName(settings.variant)},
      {"max_degree", settings.maxDegree},
      {"aligned", settings.aligned},
      {"options", options},
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
  summary.files.emplace_back("plan.json");
  return summary;
}

} // namespace gnnjit::autotune
