#include "dsl/IRMutator.h"
#include "dsl/IRVisitor.h"
#include "dsl/Layer.h"
#include "dsl/Validate.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>

namespace gnnjit::dsl {

using llvm::cast;
using llvm::dyn_cast;

namespace {

bool isIdentifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

/// Replaces placeholders by their definitions.
class SubstitutePlaceholders : public IRMutator {
public:
  explicit SubstitutePlaceholders(std::map<const ExprNode *, ExprPtr> resolved) : resolved_(std::move(resolved)) {}

protected:
  ExprPtr rewrite(const ExprPtr &node, std::vector<ExprPtr> operands) override {
    if (auto it = resolved_.find(node.get()); it != resolved_.end())
      return it->second;
    return IRMutator::rewrite(node, std::move(operands));
  }

private:
  std::map<const ExprNode *, ExprPtr> resolved_;
};

} // namespace

ShapeArg::ShapeArg(std::initializer_list<int64_t> dims) {
  const std::vector<int64_t> d(dims);
  const bool tooLarge = (d.size() == 1 && d[0] > kMaxShapeSize) ||
                        (d.size() == 2 && d[0] >= 1 && d[1] >= 1 && d[1] > kMaxShapeSize / d[0]);
  if (d.size() > 2 || std::any_of(d.begin(), d.end(), [](int64_t x) { return x < 1; }) || tooLarge) {
    std::string text;
    for (int64_t x : d)
      text += fmt::format("{}{}", text.empty() ? "" : ", ", x);
    problem = tooLarge ? fmt::format("shape {{{}}} has more than {} elements", text, kMaxShapeSize)
                       : fmt::format("shape {{{}}} is not {{}}, {{dim}} or {{heads, dim}} with positive sizes", text);
    return;
  }
  if (d.size() == 1)
    shape = Shape::vector(d[0]);
  else if (d.size() == 2)
    shape = Shape{d[0], d[1]};
}

LayerBuilder::LayerBuilder(std::string name) : name_(std::move(name)) {
  if (!isIdentifier(name_))
    problem(fmt::format("layer name '{}' is not an identifier (letters, digits, '_'; not starting with a digit)", name_));
}

void LayerBuilder::problem(std::string message) { problems_.push_back(std::move(message)); }

InputPtr LayerBuilder::declareInput(std::string name, ShapeArg shape, DType dtype, InputKind kind) {
  if (!isIdentifier(name))
    problem(fmt::format("input name '{}' is not an identifier", name));
  if (!shape.problem.empty())
    problem(fmt::format("input '{}': {}", name, shape.problem));
  for (const InputPtr &in : inputs_)
    if (in->name == name)
      problem(fmt::format("input '{}' is declared twice; give each input its own name", name));
  auto decl = std::make_shared<const InputDecl>(InputDecl{std::move(name), kind, shape.shape, dtype});
  inputs_.push_back(decl);
  return decl;
}

NodeInput LayerBuilder::nodeInput(std::string name, ShapeArg shape, DType dtype) {
  return NodeInput(declareInput(std::move(name), std::move(shape), dtype, InputKind::Node));
}
Expr LayerBuilder::srcInput(std::string name, ShapeArg shape, DType dtype) {
  return nodeInput(std::move(name), std::move(shape), dtype).src();
}
Expr LayerBuilder::dstInput(std::string name, ShapeArg shape, DType dtype) {
  return nodeInput(std::move(name), std::move(shape), dtype).dst();
}
Expr LayerBuilder::edgeInput(std::string name, ShapeArg shape, DType dtype) {
  return InputRef::make(declareInput(std::move(name), std::move(shape), dtype, InputKind::Edge), Level::Edge);
}
Expr LayerBuilder::param(std::string name, ShapeArg shape, DType dtype) {
  return InputRef::make(declareInput(std::move(name), std::move(shape), dtype, InputKind::Param), Level::Global);
}

Expr LayerBuilder::declare(std::string name, ShapeArg shape, DType dtype) {
  if (!shape.problem.empty())
    problem(fmt::format("declared value '{}': {}", name, shape.problem));
  ExprPtr p = Placeholder::make(std::move(name), shape.shape, dtype, Level::Global);
  definitions_.push_back({p, nullptr});
  return p;
}

void LayerBuilder::define(const Expr &declared, const Expr &value) {
  for (Definition &d : definitions_) {
    if (d.placeholder != declared.node())
      continue;
    const auto &name = cast<Placeholder>(d.placeholder.get())->name();
    if (d.value)
      problem(fmt::format("declared value '{}' is defined twice", name));
    else if (!value)
      problem(fmt::format("declared value '{}' is defined as an empty expression", name));
    else if (value.shape() != d.placeholder->shape())
      problem(fmt::format("declared value '{}' has shape {} but is defined with shape {}", name,
                          shapeText(d.placeholder->shape()), shapeText(value.shape())));
    d.value = value.node();
    return;
  }
  problem("define() of a value that was not made by declare() on this builder");
}

void LayerBuilder::output(std::string name, const Expr &value) {
  if (!isIdentifier(name))
    problem(fmt::format("output name '{}' is not an identifier", name));
  for (const LayerOutput &out : outputs_)
    if (out.name == name)
      problem(fmt::format("output '{}' is given twice", name));
  if (!value)
    problem(fmt::format("output '{}' is an empty expression", name));
  outputs_.push_back({std::move(name), value.node()});
}

Layer LayerBuilder::build() const {
  if (!problems_.empty())
    throwUserError("layer '{}': {}", name_, problems_.front());

  // Placeholders: every one defined, no definition reaching itself.
  std::map<const ExprNode *, const Definition *> byPlaceholder;
  for (const Definition &d : definitions_) {
    if (!d.value)
      throwUserError("layer '{}': declared value '{}' is never defined; call define() with its value", name_,
                     cast<Placeholder>(d.placeholder.get())->name());
    byPlaceholder[d.placeholder.get()] = &d;
  }
  const auto placeholdersIn = [](const ExprPtr &root) {
    std::vector<const ExprNode *> found;
    for (const ExprPtr &n : postOrder({root}))
      if (llvm::isa<Placeholder>(n.get()))
        found.push_back(n.get());
    return found;
  };
  std::map<const ExprNode *, ExprPtr> resolved;
  std::map<const ExprNode *, int> state; // 1 visiting, 2 done
  std::vector<std::string> path;
  std::function<void(const ExprNode *)> resolve = [&](const ExprNode *p) {
    const std::string &name = cast<Placeholder>(p)->name();
    if (state[p] == 2)
      return;
    if (state[p] == 1) {
      std::string cycle;
      auto start = std::find(path.begin(), path.end(), name);
      for (auto it = start; it != path.end(); ++it)
        cycle += *it + " -> ";
      throwUserError("layer '{}': declared value '{}' is defined in terms of itself ({}{}); a layer must not have "
                     "cycles",
                     name_, name, cycle, name);
    }
    state[p] = 1;
    path.push_back(name);
    const Definition &d = *byPlaceholder.at(p);
    std::map<const ExprNode *, ExprPtr> inner;
    for (const ExprNode *q : placeholdersIn(d.value)) {
      resolve(q);
      inner[q] = resolved.at(q);
    }
    resolved[p] = SubstitutePlaceholders(inner).mutate(d.value);
    path.pop_back();
    state[p] = 2;
  };
  for (const Definition &d : definitions_)
    resolve(d.placeholder.get());

  Layer layer;
  layer.name_ = name_;
  layer.inputs_ = inputs_;
  SubstitutePlaceholders substitute(resolved);
  for (const LayerOutput &out : outputs_)
    layer.outputs_.push_back({out.name, substitute.mutate(out.value)});

  // Inputs must be this builder's own.
  for (const LayerOutput &out : layer.outputs_)
    for (const ExprPtr &n : postOrder({out.value}))
      if (const auto *ref = dyn_cast<InputRef>(n.get()))
        if (std::find(inputs_.begin(), inputs_.end(), ref->input()) == inputs_.end())
          throwUserError("layer '{}': output '{}' uses input '{}' of another layer builder; declare it on this one",
                         name_, out.name, ref->input() ? ref->input()->name : "?");
  validateLayer(layer);
  return layer;
}

} // namespace gnnjit::dsl
