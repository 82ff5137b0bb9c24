#include "dsl/Expr.h"

#include <fmt/format.h>

namespace gnnjit::dsl {

namespace {

template <typename T> std::shared_ptr<T> own(T *node) { return std::shared_ptr<T>(node); }

} // namespace

std::string_view nodeKindName(NodeKind kind) {
  switch (kind) {
#define GNNJIT_IR_NODE(Name)                                                                                         \
  case NodeKind::Name:                                                                                               \
    return #Name;
#include "dsl/IRNodes.def"
  }
  return "?";
}

ExprNode::ExprNode(NodeKind kind, std::vector<ExprPtr> operands) : kind_(kind), operands_(std::move(operands)) {
  for (const ExprPtr &op : operands_) {
    if (!op) {
      fail("an operand is an empty expression (a default-constructed handle); build it from inputs first");
      return;
    }
    if (!op->valid())
      valid_ = false;
    aggregated_ = aggregated_ || op->aggregated();
  }
}

void ExprNode::setType(Shape shape, DType dtype, Level level) {
  shape_ = shape;
  dtype_ = dtype;
  level_ = level;
}

void ExprNode::fail(std::string reason) {
  valid_ = false;
  if (error_.empty())
    error_ = std::move(reason);
}

DType ExprNode::joinDTypes() {
  DType result = DType::F32;
  for (const ExprPtr &op : operands_) {
    if (!op || op->dtype() == DType::F32 || op->dtype() == result)
      continue;
    if (result != DType::F32) {
      fail(fmt::format("mixes {} and {} values; give both inputs the same dtype (arithmetic is f32 either way)",
                       dtypeName(result), dtypeName(op->dtype())));
      continue;
    }
    result = op->dtype();
  }
  return result;
}

Level ExprNode::joinLevels() const {
  Level level = Level::Global;
  for (const ExprPtr &op : operands_)
    if (op)
      level = join(level, op->level());
  return level;
}

std::string_view inputKindName(InputKind kind) {
  switch (kind) {
  case InputKind::Node:
    return "node";
  case InputKind::Edge:
    return "edge";
  case InputKind::Param:
    return "param";
  }
  return "?";
}

ExprPtr InputRef::make(InputPtr input, Level at) {
  auto node = own(new InputRef(input));
  if (!input) {
    node->fail("refers to no input");
    return node;
  }
  node->setType(input->shape, input->dtype, at);
  const bool fits = (input->kind == InputKind::Node && (at == Level::Src || at == Level::Dst)) ||
                    (input->kind == InputKind::Edge && at == Level::Edge) ||
                    (input->kind == InputKind::Param && at == Level::Global);
  if (!fits)
    node->fail(fmt::format("{} input '{}' cannot be read at {}", inputKindName(input->kind), input->name,
                           levelName(at)));
  return node;
}

std::string_view graphQuantityName(GraphQuantity q) {
  switch (q) {
  case GraphQuantity::InDegree:
    return "in_degree";
  case GraphQuantity::OutDegree:
    return "out_degree";
  case GraphQuantity::EdgeWeight:
    return "edge_weight";
  case GraphQuantity::WeightedInDegree:
    return "weighted_in_degree";
  case GraphQuantity::AttentionDropout:
    return "attention_dropout";
  }
  return "?";
}

ExprPtr GraphValue::make(GraphQuantity quantity, Level at) {
  auto node = own(new GraphValue(quantity, 0.0));
  node->setType(Shape::scalar(), DType::F32, at);
  if (quantity == GraphQuantity::AttentionDropout) {
    node->fail("attention_dropout has a probability and heads: make it with attentionDropout(p, heads)");
    return node;
  }
  const bool perEdge = quantity == GraphQuantity::EdgeWeight;
  if (perEdge ? at != Level::Edge : (at != Level::Src && at != Level::Dst))
    node->fail(fmt::format("{} cannot be read at {}: {}", graphQuantityName(quantity), levelName(at),
                           perEdge ? "it is one value per edge" : "degrees are read at src or dst"));
  return node;
}

ExprPtr GraphValue::makeAttentionDropout(double probability, int64_t heads) {
  auto node = own(new GraphValue(GraphQuantity::AttentionDropout, probability));
  node->setType(Shape{heads, 1}, DType::F32, Level::Edge);
  if (!(probability > 0.0 && probability < 1.0))
    node->fail(fmt::format("attention dropout needs a probability in (0, 1), got {}", probability));
  else if (heads < 1)
    node->fail(fmt::format("attention dropout needs at least one head, got {}", heads));
  return node;
}

ExprPtr Constant::make(double value) {
  auto node = own(new Constant(value));
  node->setType(Shape::scalar(), DType::F32, Level::Global);
  return node;
}

std::string_view unaryOpName(UnaryOp op) {
  switch (op) {
  case UnaryOp::Neg:
    return "neg";
  case UnaryOp::Exp:
    return "exp";
  case UnaryOp::Log:
    return "log";
  case UnaryOp::Sqrt:
    return "sqrt";
  case UnaryOp::Rsqrt:
    return "rsqrt";
  case UnaryOp::Relu:
    return "relu";
  case UnaryOp::LeakyRelu:
    return "leaky_relu";
  case UnaryOp::Elu:
    return "elu";
  case UnaryOp::Sigmoid:
    return "sigmoid";
  case UnaryOp::Tanh:
    return "tanh";
  case UnaryOp::Abs:
    return "abs";
  }
  return "?";
}

Unary::Unary(UnaryOp op, ExprPtr x, double attribute)
    : ExprNode(NodeKind::Unary, {std::move(x)}), op_(op), attribute_(attribute) {}

ExprPtr Unary::make(UnaryOp op, ExprPtr x, double attribute) {
  auto node = own(new Unary(op, std::move(x), attribute));
  if (node->operands()[0])
    node->setType(node->x()->shape(), node->joinDTypes(), node->joinLevels());
  return node;
}

std::string_view binaryOpName(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
    return "add";
  case BinaryOp::Sub:
    return "sub";
  case BinaryOp::Mul:
    return "mul";
  case BinaryOp::Div:
    return "div";
  case BinaryOp::Min:
    return "min";
  case BinaryOp::Max:
    return "max";
  case BinaryOp::Greater:
    return "gt";
  case BinaryOp::GreaterEqual:
    return "ge";
  }
  return "?";
}

Binary::Binary(BinaryOp op, ExprPtr a, ExprPtr b) : ExprNode(NodeKind::Binary, {std::move(a), std::move(b)}), op_(op) {}

ExprPtr Binary::make(BinaryOp op, ExprPtr a, ExprPtr b) {
  auto node = own(new Binary(op, std::move(a), std::move(b)));
  if (!node->a() || !node->b())
    return node;
  const auto shape = broadcast(node->a()->shape(), node->b()->shape());
  if (!shape)
    node->fail(fmt::format("{} of shapes {} and {}, which do not broadcast (each axis must match or be 1)",
                           binaryOpName(op), shapeText(node->a()->shape()), shapeText(node->b()->shape())));
  node->setType(shape.value_or(node->a()->shape()), node->joinDTypes(), node->joinLevels());
  return node;
}

Select::Select(ExprPtr cond, ExprPtr a, ExprPtr b)
    : ExprNode(NodeKind::Select, {std::move(cond), std::move(a), std::move(b)}) {}

ExprPtr Select::make(ExprPtr cond, ExprPtr a, ExprPtr b) {
  auto node = own(new Select(std::move(cond), std::move(a), std::move(b)));
  if (!node->cond() || !node->a() || !node->b())
    return node;
  auto shape = broadcast(node->a()->shape(), node->b()->shape());
  if (shape)
    shape = broadcast(*shape, node->cond()->shape());
  if (!shape)
    node->fail(fmt::format("select of shapes {} ? {} : {}, which do not broadcast", shapeText(node->cond()->shape()),
                           shapeText(node->a()->shape()), shapeText(node->b()->shape())));
  node->setType(shape.value_or(node->a()->shape()), node->joinDTypes(), node->joinLevels());
  return node;
}

SumAxis::SumAxis(ExprPtr x, Axis axis) : ExprNode(NodeKind::SumAxis, {std::move(x)}), axis_(axis) {}

ExprPtr SumAxis::make(ExprPtr x, Axis axis) {
  auto node = own(new SumAxis(std::move(x), axis));
  if (!node->x())
    return node;
  Shape s = node->x()->shape();
  (axis == Axis::Dim ? s.dim : s.heads) = 1;
  node->setType(s, node->joinDTypes(), node->joinLevels());
  return node;
}

BroadcastTo::BroadcastTo(ExprPtr x) : ExprNode(NodeKind::BroadcastTo, {std::move(x)}) {}

ExprPtr BroadcastTo::make(ExprPtr x, Shape shape) {
  auto node = own(new BroadcastTo(std::move(x)));
  if (!node->x())
    return node;
  const auto b = broadcast(node->x()->shape(), shape);
  if (!b || *b != shape)
    node->fail(fmt::format("cannot broadcast {} to {}", shapeText(node->x()->shape()), shapeText(shape)));
  node->setType(shape, node->joinDTypes(), node->joinLevels());
  return node;
}

Reshape::Reshape(ExprPtr x) : ExprNode(NodeKind::Reshape, {std::move(x)}) {}

ExprPtr Reshape::make(ExprPtr x, Shape shape) {
  auto node = own(new Reshape(std::move(x)));
  if (!node->x())
    return node;
  if (shape.heads < 1 || shape.dim < 1 || shape.size() != node->x()->shape().size())
    node->fail(fmt::format("cannot reshape {} ({} elements) to {}", shapeText(node->x()->shape()),
                           node->x()->shape().size(), shapeText(shape)));
  node->setType(shape, node->joinDTypes(), node->joinLevels());
  return node;
}

EdgeSoftmax::EdgeSoftmax(ExprPtr score) : ExprNode(NodeKind::EdgeSoftmax, {std::move(score)}) {}

ExprPtr EdgeSoftmax::make(ExprPtr score) {
  auto node = own(new EdgeSoftmax(std::move(score)));
  if (!node->score())
    return node;
  const Shape s = node->score()->shape();
  node->setType(s, node->joinDTypes(), Level::Edge);
  if (s.dim != 1)
    node->fail(fmt::format("edgeSoftmax needs one score per edge and head ([heads, 1]), got {}; reduce the feature "
                           "axis first, e.g. sum(score, Axis::Dim)",
                           shapeText(s)));
  return node;
}

std::string_view reduceName(Reduce reduce) {
  switch (reduce) {
  case Reduce::Sum:
    return "sum";
  case Reduce::Mean:
    return "mean";
  case Reduce::Max:
    return "max";
  case Reduce::Min:
    return "min";
  }
  return "?";
}

std::string_view overName(Over over) {
  switch (over) {
  case Over::InEdges:
    return "in_edges";
  case Over::OutEdges:
    return "out_edges";
  case Over::AllEdges:
    return "all_edges";
  case Over::AllNodes:
    return "all_nodes";
  }
  return "?";
}

Aggregate::Aggregate(Reduce reduce, ExprPtr message, Over over)
    : ExprNode(NodeKind::Aggregate, {std::move(message)}), reduce_(reduce), over_(over) {}

ExprPtr Aggregate::make(Reduce reduce, ExprPtr message, Over over) {
  auto node = own(new Aggregate(reduce, std::move(message), over));
  if (!node->message())
    return node;
  const ExprPtr &m = node->message();
  Level result = Level::Dst;
  if (over == Over::OutEdges)
    result = Level::Src;
  else if (over == Over::AllEdges || over == Over::AllNodes)
    result = Level::Global;
  node->setType(m->shape(), node->joinDTypes(), result);
  if (over == Over::AllNodes && m->level() == Level::Edge)
    node->fail("a sum over all nodes of a per-edge message; use Over::AllEdges");
  node->setAggregated(over == Over::InEdges || over == Over::OutEdges);
  return node;
}

std::string_view savedKindName(SavedKind kind) {
  switch (kind) {
  case SavedKind::Value:
    return "value";
  case SavedKind::SoftmaxProb:
    return "softmax_prob";
  case SavedKind::ArgMatch:
    return "arg_match";
  }
  return "?";
}

Saved::Saved(SavedKind what, ExprPtr forward) : ExprNode(NodeKind::Saved, {std::move(forward)}), what_(what) {}

ExprPtr Saved::make(SavedKind what, ExprPtr forward) {
  auto node = own(new Saved(what, std::move(forward)));
  if (!node->forward())
    return node;
  const ExprPtr &f = node->forward();
  switch (what) {
  case SavedKind::Value:
    node->setType(f->shape(), f->dtype(), Level::Dst);
    if (f->level() != Level::Dst)
      node->fail("only per-destination forward values are saved");
    break;
  case SavedKind::SoftmaxProb:
    node->setType(f->shape(), f->dtype(), Level::Edge);
    if (!llvm::isa<EdgeSoftmax>(f.get()))
      node->fail("softmax_prob refers to an edgeSoftmax");
    break;
  case SavedKind::ArgMatch: {
    node->setType(f->shape(), DType::F32, Level::Edge);
    const auto *agg = llvm::dyn_cast<Aggregate>(f.get());
    if (!agg || (agg->reduce() != Reduce::Max && agg->reduce() != Reduce::Min) || agg->over() != Over::InEdges)
      node->fail("arg_match refers to a max or min aggregation over in-edges");
    break;
  }
  }
  node->setAggregated(false); // a saved value is data, read like an input
  return node;
}

std::shared_ptr<const Placeholder> Placeholder::make(std::string name, Shape shape, DType dtype, Level level) {
  auto node = own(new Placeholder(std::move(name)));
  node->setType(shape, dtype, level);
  return node;
}

} // namespace gnnjit::dsl
