#include "cli/LayersCommand.h"

#include "dsl/IRVisitor.h"
#include "layers/Library.h"
#include "lower/Pipeline.h"
#include "support/Error.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <set>

namespace gnnjit::cli {

namespace {

/// The family the lowering classifies the layer into, with the per-stage
/// reasons (e.g. "attention: sum of edgeSoftmax(score) x value").
std::string familyOf(const dsl::Layer &layer) {
  return std::string(lower::familyName(lower::lowerLayer(layer).family()));
}

struct LayersArgs {
  std::vector<std::string> names;
  bool json = false;
  bool print = false;
  int64_t dim = 16;
  int64_t heads = 4;
};

struct InputRow {
  std::string name, kind, readAt, shape, dtype;
  std::vector<std::string> levels;
  dsl::Shape rawShape;
};

/// Where each input is read (src, dst, edge, global), from the layer's DAG.
std::map<const dsl::InputDecl *, std::set<dsl::Level>> readLevels(const dsl::Layer &layer) {
  std::vector<dsl::ExprPtr> roots;
  for (const dsl::LayerOutput &out : layer.outputs())
    roots.push_back(out.value);
  std::map<const dsl::InputDecl *, std::set<dsl::Level>> levels;
  for (const dsl::ExprPtr &n : dsl::postOrder(roots))
    if (const auto *ref = llvm::dyn_cast<dsl::InputRef>(n.get()))
      levels[ref->input().get()].insert(ref->level());
  return levels;
}

std::vector<InputRow> inputRows(const dsl::Layer &layer) {
  const auto levels = readLevels(layer);
  std::vector<InputRow> rows;
  for (const dsl::InputPtr &in : layer.inputs()) {
    InputRow row;
    row.name = in->name;
    row.kind = std::string(dsl::inputKindName(in->kind));
    if (auto it = levels.find(in.get()); it != levels.end())
      for (dsl::Level l : it->second)
        row.levels.emplace_back(dsl::levelName(l));
    row.readAt = fmt::format("{}", fmt::join(row.levels, "+"));
    row.shape = dsl::shapeText(in->shape);
    row.rawShape = in->shape;
    row.dtype = std::string(dsl::dtypeName(in->dtype));
    rows.push_back(std::move(row));
  }
  return rows;
}

layers::LayerOptions optionsFor(const layers::LayerInfo &info, const LayersArgs &args) {
  layers::LayerOptions options;
  options.dim = args.dim;
  options.heads = layers::takes(info, layers::Knob::Heads) ? args.heads : 1;
  return options;
}

nlohmann::ordered_json inputJson(const InputRow &row) {
  return {{"name", row.name},
          {"kind", row.kind},
          {"read_at", row.levels},
          {"shape", {row.rawShape.heads, row.rawShape.dim}},
          {"dtype", row.dtype}};
}

nlohmann::ordered_json layerJson(const layers::LayerInfo &info, const dsl::Layer &layer,
                                 const layers::LayerOptions &options) {
  nlohmann::ordered_json inputs = nlohmann::ordered_json::array(), params = nlohmann::ordered_json::array();
  for (const InputRow &row : inputRows(layer))
    (row.kind == "param" ? params : inputs).push_back(inputJson(row));
  nlohmann::ordered_json outputs = nlohmann::ordered_json::array();
  for (const dsl::LayerOutput &out : layer.outputs())
    outputs.push_back({{"name", out.name}, {"shape", {out.value->shape().heads, out.value->shape().dim}}});
  return {{"name", info.name},
          {"summary", info.summary},
          {"pyg_class", info.pygClass},
          {"family", familyOf(layer)},
          {"family_hint", info.familyHint},
          {"options", info.options},
          {"outside", info.outside},
          {"hash", layer.hashHex()},
          {"built_with", {{"dim", options.dim}, {"heads", options.heads}}},
          {"inputs", inputs},
          {"params", params},
          {"outputs", outputs}};
}

void printText(const layers::LayerInfo &info, const dsl::Layer &layer, const layers::LayerOptions &options,
               bool printIr) {
  fmt::print("{}  ({})\n", info.name, info.pygClass);
  fmt::print("  {}\n", info.summary);
  fmt::print("  family:  {} (as lowered with these options; design table: {})\n", familyOf(layer), info.familyHint);
  fmt::print("  options: {}\n", info.options);
  fmt::print("  outside: {}\n", info.outside);
  const std::vector<InputRow> rows = inputRows(layer);
  const auto printRows = [&](bool params) {
    bool any = false;
    for (const InputRow &row : rows) {
      if ((row.kind == "param") != params)
        continue;
      any = true;
      fmt::print("    {:<10} {:<6} {:<8} {:<9} {}\n", row.name, row.kind, row.readAt, row.shape, row.dtype);
    }
    if (!any)
      fmt::print("    (none)\n");
  };
  fmt::print("  inputs (name, kind, read at, shape, dtype) with dim={}, heads={}:\n", options.dim, options.heads);
  printRows(false);
  fmt::print("  params:\n");
  printRows(true);
  for (const dsl::LayerOutput &out : layer.outputs())
    fmt::print("  output:  {} {}\n", out.name, dsl::shapeText(out.value->shape()));
  if (printIr) {
    fmt::print("  IR:\n");
    std::string text = layer.print();
    size_t start = 0;
    while (start < text.size()) {
      const size_t end = text.find('\n', start);
      fmt::print("    {}\n", text.substr(start, end - start));
      if (end == std::string::npos)
        break;
      start = end + 1;
    }
  }
  fmt::print("\n");
}

void run(const LayersArgs &args) {
  std::vector<const layers::LayerInfo *> selected;
  if (args.names.empty())
    for (const layers::LayerInfo &info : layers::library())
      selected.push_back(&info);
  for (const std::string &name : args.names)
    selected.push_back(&layers::findLayer(name));

  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const layers::LayerInfo *info : selected) {
    const layers::LayerOptions options = optionsFor(*info, args);
    const dsl::Layer layer = info->build(options);
    if (args.json)
      all.push_back(layerJson(*info, layer, options));
    else
      printText(*info, layer, options, args.print);
  }
  if (args.json)
    fmt::print("{}\n", all.dump(2));
}

} // namespace

void addLayersCommand(CLI::App &app) {
  auto args = std::make_shared<LayersArgs>();
  CLI::App *cmd = app.add_subcommand("layers", "List the layer library: inputs, parameters, PyG class, family");
  cmd->add_option("NAME", args->names, "Only these layers (default: all)");
  cmd->add_flag("--json", args->json, "Print a JSON array instead of text");
  cmd->add_flag("--print", args->print, "Also print each layer's IR");
  cmd->add_option("--dim", args->dim, "Features per head used to show shapes")->capture_default_str()->check(
      CLI::Range(int64_t{1}, int64_t{1} << 30));
  cmd->add_option("--heads", args->heads, "Heads used to show shapes of attention layers")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  cmd->callback([args] { run(*args); });
}

} // namespace gnnjit::cli
