#include "ref/Executor.h"

#include "ref/Bindings.h"
#include "ref/EdgeLoops.h"
#include "ref/EdgeProgram.h"
#include "ref/Evaluator.h"
#include "ref/MemoryEstimate.h"
#include "support/Error.h"

#include <map>

namespace gnnjit::ref {

namespace {

/// A prepared Global or per-node value as numNodes x size.
Tensor perNodeTensor(const NodeValue &value, int64_t numNodes) {
  Tensor t(numNodes, value.size());
  for (int64_t v = 0; v < numNodes; ++v)
    std::copy(value.row(v), value.row(v) + value.size(), &t.values[static_cast<size_t>(v * t.cols)]);
  return t;
}

/// Adds one gradient term into `grad`, as the input's kind says.
void addTerm(const dsl::InputDecl &input, const dsl::ExprPtr &term, Evaluator &evaluator, Tensor &grad) {
  const dsl::Level level = term->level();
  switch (input.kind) {
  case dsl::InputKind::Node: {
    if (level == dsl::Level::Edge)
      throwInternalError("a gradient term of node input '{}' is per edge; the differentiator must sum it over "
                         "in-edges or out-edges",
                         input.name);
    const NodeValue &v = evaluator.value(*term);
    for (int64_t node = 0; node < grad.rows; ++node)
      for (int64_t k = 0; k < grad.cols; ++k)
        grad.at(node, k) += v.row(node)[k];
    return;
  }
  case dsl::InputKind::Edge: { // any level, evaluated at every edge
    EdgeProgram program(evaluator, term);
    forEachEdgeByDst(evaluator.graph(), [&](const EdgeContext &e) {
      const double *row = program.evaluate(e);
      for (int64_t k = 0; k < grad.cols; ++k)
        grad.at(e.id, k) += row[k];
    });
    return;
  }
  case dsl::InputKind::Param: {
    if (level != dsl::Level::Global)
      throwInternalError("a gradient term of parameter '{}' is at level {}; the differentiator must sum it over "
                         "all edges or all nodes",
                         input.name, dsl::levelName(level));
    const double *row = evaluator.value(*term).row(0);
    for (int64_t k = 0; k < grad.cols; ++k)
      grad.at(0, k) += row[k];
    return;
  }
  }
}

} // namespace

TensorMap forward(const dsl::Layer &layer, const graph::Graph &graph, const TensorMap &inputs, uint64_t seed) {
  checkBindings(layer.name(), layer.inputs(), {}, graph, inputs);
  requireHostMemory(forwardMemory(layer, graph), fmt::format("The fp64 reference forward pass of '{}'", layer.name()),
                    "Use a smaller graph or width for the reference.");
  std::vector<dsl::ExprPtr> roots;
  for (const dsl::LayerOutput &out : layer.outputs())
    roots.push_back(out.value);
  Evaluator evaluator(graph, inputs, seed);
  evaluator.prepare(roots);

  TensorMap result;
  for (const dsl::LayerOutput &out : layer.outputs()) {
    if (out.value->level() == dsl::Level::Edge)
      throwInternalError("layer '{}': output '{}' is per edge; build() lets only per-node outputs through",
                         layer.name(), out.name);
    result[out.name] = perNodeTensor(evaluator.value(*out.value), graph.numNodes());
  }
  return result;
}

TensorMap backward(const dsl::Layer &layer, const dsl::BackwardPlan &plan, const graph::Graph &graph,
                   const TensorMap &inputs, uint64_t seed) {
  checkBindings(layer.name(), layer.inputs(), plan.outputGradients, graph, inputs);
  requireHostMemory(backwardMemory(layer, plan, graph),
                    fmt::format("The fp64 reference backward pass of '{}'", layer.name()),
                    "Use a smaller graph or width for the reference.");

  // Every term is checked before any work, then all are prepared at once so
  // shared subexpressions (a saved softmax, an aggregate) are computed once.
  std::map<std::string, const dsl::InputGradient *, std::less<>> byInput;
  std::vector<dsl::ExprPtr> roots;
  for (const dsl::InputGradient &g : plan.gradients) {
    if (!g.input || !layer.findInput(g.input->name))
      throwInternalError("layer '{}': the backward plan has a gradient for '{}', which is not an input of the layer",
                         layer.name(), g.input ? g.input->name : "(null)");
    if (!byInput.emplace(g.input->name, &g).second)
      throwInternalError("layer '{}': the backward plan has two gradients for input '{}'", layer.name(),
                         g.input->name);
    for (const dsl::ExprPtr &term : g.terms) {
      if (!term)
        throwInternalError("layer '{}': a gradient term of input '{}' is empty", layer.name(), g.input->name);
      if (term->shape() != g.input->shape)
        throwInternalError("layer '{}': a gradient term of input '{}' has shape {}, the input {}; the "
                           "differentiator must give terms the input's exact shape (broadcast or sum them)",
                           layer.name(), g.input->name, dsl::shapeText(term->shape()),
                           dsl::shapeText(g.input->shape));
      roots.push_back(term);
    }
  }
  Evaluator evaluator(graph, inputs, seed);
  evaluator.prepare(roots);

  TensorMap result;
  for (const dsl::InputPtr &in : layer.inputs()) {
    Tensor grad(bindingRows(*in, graph), in->shape.size());
    if (auto it = byInput.find(in->name); it != byInput.end())
      for (const dsl::ExprPtr &term : it->second->terms)
        addTerm(*in, term, evaluator, grad);
    result[in->name] = std::move(grad);
  }
  return result;
}

} // namespace gnnjit::ref
