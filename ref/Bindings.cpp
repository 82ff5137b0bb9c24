#include "ref/Bindings.h"

#include "support/Error.h"

#include <fmt/format.h>

#include <set>

namespace gnnjit::ref {

int64_t bindingRows(const dsl::InputDecl &decl, const graph::Graph &graph) {
  switch (decl.kind) {
  case dsl::InputKind::Node:
    return graph.numNodes();
  case dsl::InputKind::Edge:
    return graph.numEdgeIds();
  case dsl::InputKind::Param:
    return 1;
  }
  return 1;
}

namespace {

/// "5 x 6 (node input [2, 3]: one row per node of the 5, 6 columns = 2 heads x 3)".
std::string expectedText(const dsl::InputDecl &decl, const graph::Graph &graph) {
  const int64_t rows = bindingRows(decl, graph);
  std::string meaning;
  switch (decl.kind) {
  case dsl::InputKind::Node:
    meaning = fmt::format("one row per node of the {}", rows);
    break;
  case dsl::InputKind::Edge:
    meaning = rows == graph.numEdges()
                  ? fmt::format("one row per edge of the {}, in the graph's original edge order", rows)
                  : fmt::format("one row per edge id: the input's {} edges in their order (those cleaning removed "
                                "unread), then the {} cleaning added",
                                graph.numInputEdges(), rows - graph.numInputEdges());
    break;
  case dsl::InputKind::Param:
    meaning = "a single row";
    break;
  }
  return fmt::format("{} x {} ({} input {}: {}, {} columns = {} heads x {}, element (h, d) at column h * {} + d)",
                     rows, decl.shape.size(), dsl::inputKindName(decl.kind), dsl::shapeText(decl.shape), meaning,
                     decl.shape.size(), decl.shape.heads, decl.shape.dim, decl.shape.dim);
}

void checkOne(std::string_view layerName, const dsl::InputDecl &decl, std::string_view role,
              const graph::Graph &graph, const TensorMap &given) {
  auto it = given.find(decl.name);
  if (it == given.end())
    throwUserError("layer '{}': {} '{}' is not bound; bind a tensor of {}", layerName, role, decl.name,
                   expectedText(decl, graph));
  const Tensor &t = it->second;
  if (t.rows != bindingRows(decl, graph) || t.cols != decl.shape.size())
    throwUserError("layer '{}': {} '{}' is bound to a {} x {} tensor; expected {}", layerName, role, decl.name, t.rows,
                   t.cols, expectedText(decl, graph));
  if (t.rows < 0 || t.cols < 0 || static_cast<int64_t>(t.values.size()) != t.rows * t.cols)
    throwUserError("layer '{}': the tensor bound to '{}' says {} x {} but holds {} values; fill values with rows * "
                   "cols numbers",
                   layerName, decl.name, t.rows, t.cols, t.values.size());
}

} // namespace

void checkBindings(std::string_view layerName, const std::vector<dsl::InputPtr> &inputs,
                   const std::vector<dsl::InputPtr> &outputGradients, const graph::Graph &graph,
                   const TensorMap &given) {
  std::set<std::string, std::less<>> known;
  for (const dsl::InputPtr &in : inputs) {
    checkOne(layerName, *in, "input", graph, given);
    known.insert(in->name);
  }
  for (const dsl::InputPtr &in : outputGradients) {
    checkOne(layerName, *in, "output gradient", graph, given);
    known.insert(in->name);
  }
  for (const auto &[name, tensor] : given) {
    if (known.count(name))
      continue;
    std::string expected;
    for (const dsl::InputPtr &in : inputs)
      expected += fmt::format("{}{}", expected.empty() ? "" : ", ", in->name);
    for (const dsl::InputPtr &in : outputGradients)
      expected += fmt::format("{}{}", expected.empty() ? "" : ", ", in->name);
    throwUserError("layer '{}': a tensor is bound to '{}', but the layer has no input of that name; it takes {}",
                   layerName, name, expected.empty() ? "no inputs" : expected);
  }
}

} // namespace gnnjit::ref
