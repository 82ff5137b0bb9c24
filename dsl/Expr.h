// DSL expressions: immutable nodes made by make() factories, shared by
// handle, classified with LLVM-style isa/dyn_cast on a Kind enum.
//
// A factory never throws. A node whose operands do not fit (shapes that do
// not broadcast, a softmax of a vector) records why; LayerBuilder::build()
// reports the first such node with the layer's name, so every user error is
// told in one place with full context.
#pragma once

#include "dsl/Type.h"

#include <llvm/Support/Casting.h>

#include <memory>
#include <string>
#include <vector>

namespace gnnjit::dsl {

enum class NodeKind : uint8_t {
#define GNNJIT_IR_NODE(Name) Name,
#include "dsl/IRNodes.def"
};

std::string_view nodeKindName(NodeKind kind);

class ExprNode;
/// A shared handle to an immutable node. Null only when default-constructed.
using ExprPtr = std::shared_ptr<const ExprNode>;

class ExprNode {
public:
  virtual ~ExprNode() = default;
  NodeKind kind() const { return kind_; }
  Shape shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  Level level() const { return level_; }
  /// Depends on a forward aggregation (not counting Saved values): such a
  /// value is per destination and cannot feed a per-edge message.
  bool aggregated() const { return aggregated_; }
  const std::vector<ExprPtr> &operands() const { return operands_; }

  /// Why this node is malformed, or empty. A node with a malformed operand is
  /// malformed too but names no reason of its own.
  const std::string &error() const { return error_; }
  bool valid() const { return valid_; }

protected:
  ExprNode(NodeKind kind, std::vector<ExprPtr> operands);
  /// Sets shape, dtype and level; call once from the factory.
  void setType(Shape shape, DType dtype, Level level);
  void fail(std::string reason);
  void setAggregated(bool value) { aggregated_ = value; }

  /// Joins operand dtypes: f32 yields to a narrower type; f16 with bf16 fails.
  DType joinDTypes();
  Level joinLevels() const;

private:
  NodeKind kind_;
  Shape shape_;
  DType dtype_ = DType::F32;
  Level level_ = Level::Global;
  bool aggregated_ = false;
  bool valid_ = true;
  std::string error_;
  std::vector<ExprPtr> operands_;
};

// ---- inputs -----------------------------------------------------------------

enum class InputKind : uint8_t {
  Node,  ///< one value per node, read at the source and/or destination of edges
  Edge,  ///< one value per edge, in the graph's original edge order
  Param, ///< shared by all edges and nodes (learnable)
};
std::string_view inputKindName(InputKind kind);

/// An input declared on a LayerBuilder. Expressions refer to it by InputRef.
struct InputDecl {
  std::string name;
  InputKind kind;
  Shape shape;
  DType dtype;
};
using InputPtr = std::shared_ptr<const InputDecl>;

/// An input read at one place: a node input at Src or Dst, an edge input at
/// Edge, a parameter at Global. Also used by backward plans for gradients
/// of outputs (a Node input read at Dst).
class InputRef final : public ExprNode {
public:
  static ExprPtr make(InputPtr input, Level at);
  const InputPtr &input() const { return input_; }
  static bool classof(const ExprNode *n) { return n->kind() == NodeKind::InputRef; }

private:
  InputRef(InputPtr input) : ExprNode(NodeKind::InputRef, {}), input_(std::move(input)) {}
  InputPtr input_;
};

/// Quantities of the graph itself.
enum class GraphQuantity : uint8_t {
  InDegree,   ///< number of edges into a node
  OutDegree,  ///< number of edges out of a node
  EdgeWeight, ///< the graph's static edge weight (1 when unweighted)
  WeightedInDegree, ///< sum of the weights of the edges into a node (= InDegree when unweighted)
  /// Per edge and head: 1 / (1 - p) when the edge's attention coefficient
  /// is kept, 0 when it is dropped, with probability p, drawn anew by each
  /// call's seed (dsl/AttentionDropout.h defines the draw).
  AttentionDropout,
};
std::string_view graphQuantityName(GraphQuantity q);

class GraphValue final : public ExprNode {
public:
  /// Degrees are read at Src or Dst; EdgeWeight only at Edge.
  static ExprPtr make(GraphQuantity quantity, Level at);
  /// The AttentionDropout mask of shape [heads, 1] at Edge, dropping with
  /// probability p in (0, 1).
  static ExprPtr makeAttentionDropout(double probability, int64_t heads);
  GraphQuantity quantity() const { return quantity_; }
  /// AttentionDropout's p (0 for the other quantities).
  double probability() const { return probability_; }
  static bool classof(const ExprNode *n) { return n->kind() == NodeKind::GraphValue; }

private:
  GraphValue(GraphQuantity q, double probability)
      : ExprNode(NodeKind::GraphValue, {}), quantity_(q), probability_(probability) {}
  GraphQuantity quantity_;
  double probability_;
};

class Constant final : public ExprNode {
public:
  static ExprPtr make(double value);
  double value() const { return value_; }
  static bool classof(const ExprNode *n) { return n->kind() == NodeKind::Constant; }

private:
  explicit Constant(double v) : ExprNode(NodeKind::Constant, {}), value_(v) {}
  double value_;
};

// ---- element-wise -----------------------------------------------------------

enum class UnaryOp : uint8_t { Neg, Exp, Log, Sqrt, Rsqrt, Relu, LeakyRelu, Elu, Sigmoid, Tanh, Abs };
std::string_view unaryOpName(UnaryOp op);

class Unary final : public ExprNode {
public:
  /// `attribute` is LeakyRelu's negative slope or Elu's alpha; 0 otherwise.
  static ExprPtr make(UnaryOp op, ExprPtr x, double attribute = 0);
  UnaryOp op() const { return op_; }
  double attribute() const { return attribute_; }
  const ExprPtr &x() const { return operands()[0]; }
  static bool classof(const ExprNode *n) { return n->kind() == NodeKind::Unary; }

private:
  Unary(UnaryOp op, ExprPtr x, double attribute);
  UnaryOp op_;
  double attribute_;
};

/// Comparisons give 1 or 0 (backward plans use them for relu', max', ...).
enum class BinaryOp : uint8_t { Add, Sub, Mul, Div, Min, Max, Greater, GreaterEqual };
std::string_view binaryOpName(BinaryOp op);

class Binary final : public ExprNode {
public:
  static ExprPtr make(BinaryOp op, ExprPtr a, ExprPtr b);
  BinaryOp op() const { return op_; }
  const ExprPtr &a() const { return operands()[0]; }
  const ExprPtr &b() const { return operands()[1]; }
  static bool classof(const ExprNode *n) { return n->kind() == NodeKind::Binary; }

private:
  Binary(BinaryOp op, ExprPtr a, ExprPtr b);
  BinaryOp op_;
};

/// cond != 0 ? a : b, element-wise with broadcasting. Only the chosen side's
/// value is used (so a side that overflows where it is not chosen is fine).
class Select final : public ExprNode {
public:
  static ExprPtr make(ExprPtr cond, ExprPtr a, ExprPtr b);
  const ExprPtr &cond() const { return operands()[0]; }
  const ExprPtr &a() const { return operands()[1]; }
  const ExprPtr &b() const { return operands()[2]; }
  static bool classof(const ExprNode *n) { return n->kind() == NodeKind::Select; }

private:
  Select(ExprPtr cond, ExprPtr a, ExprPtr b);
};

// ---- shape changes ----------------------------------------------------------

enum class Axis : uint8_t { Heads, Dim };

/// Sum over one axis; that axis becomes 1.
class SumAxis final : public ExprNode {
public:
  static ExprPtr make(ExprPtr x, Axis axis);
  Axis axis() const { return axis_; }
  const ExprPtr &x() const { return operands()[0]; }
  static bool classof(const ExprNode *n) { return n->kind() == NodeKind::SumAxis; }

private:
  SumAxis(ExprPtr x, Axis axis);
  Axis axis_;
};

/// Repeats x along its size-1 axes to `shape`.
class BroadcastTo final : public ExprNode {
public:
  static ExprPtr make(ExprPtr x, Shape shape);
  const ExprPtr &x() const { return operands()[0]; }
  static bool classof(const ExprNode *n) { return n->kind() == NodeKind::BroadcastTo; }

private:
  explicit BroadcastTo(ExprPtr x);
};

/// Same elements, row-major, another [heads, dim] split: [h, d] -> [1, h*d]
/// concatenates heads; [1, h*d] -> [h, d] splits them.
class Reshape final : public ExprNode {
public:
  static ExprPtr make(ExprPtr x, Shape shape);
  const ExprPtr &x() const { return operands()[0]; }
  static bool classof(const ExprNode *n) { return n->kind() == NodeKind::Reshape; }

private:
  explicit Reshape(ExprPtr x);
};

// ---- graph operations -------------------------------------------------------

/// alpha_e = exp(s_e) / sum over the edges e' into the same destination of
/// exp(s_e'), per head. The score is one value per edge and head.
class EdgeSoftmax final : public ExprNode {
public:
  static ExprPtr make(ExprPtr score);
  const ExprPtr &score() const { return operands()[0]; }
  static bool classof(const ExprNode *n) { return n->kind() == NodeKind::EdgeSoftmax; }

private:
  explicit EdgeSoftmax(ExprPtr score);
};

enum class Reduce : uint8_t { Sum, Mean, Max, Min };
std::string_view reduceName(Reduce reduce);

/// What an aggregation groups by.
enum class Over : uint8_t {
  InEdges,  ///< the edges into each node (the forward aggregation); result at Dst
  OutEdges, ///< the edges out of each node (backward: the transpose); result at Src
  AllEdges, ///< every edge (parameter gradients); result Global
  AllNodes, ///< every node (parameter gradients); result Global
};
std::string_view overName(Over over);

/// Reduces a message over a group of edges (or nodes). A node with no edge
/// in its group gets 0 for every reduction (as PyG does), Mean divides by
/// the group size.
class Aggregate final : public ExprNode {
public:
  static ExprPtr make(Reduce reduce, ExprPtr message, Over over = Over::InEdges);
  Reduce reduce() const { return reduce_; }
  Over over() const { return over_; }
  const ExprPtr &message() const { return operands()[0]; }
  static bool classof(const ExprNode *n) { return n->kind() == NodeKind::Aggregate; }

private:
  Aggregate(Reduce reduce, ExprPtr message, Over over);
  Reduce reduce_;
  Over over_;
};

/// Backward plans only: a value the forward pass computed, read back.
enum class SavedKind : uint8_t {
  Value,       ///< a per-destination forward value (an aggregate, or an expression of them), at Dst
  SoftmaxProb, ///< alpha_e of a forward EdgeSoftmax, recomputed from its saved log-sum-exp, at Edge
  ArgMatch,    ///< 1 where this edge gave a forward Max/Min aggregate its value, else 0, at Edge
};
std::string_view savedKindName(SavedKind kind);

class Saved final : public ExprNode {
public:
  static ExprPtr make(SavedKind what, ExprPtr forward);
  SavedKind what() const { return what_; }
  const ExprPtr &forward() const { return operands()[0]; }
  static bool classof(const ExprNode *n) { return n->kind() == NodeKind::Saved; }

private:
  Saved(SavedKind what, ExprPtr forward);
  SavedKind what_;
};

/// A value declared before it is defined (LayerBuilder::declare), so a layer
/// can be written in reading order. build() replaces every placeholder by its
/// definition; a definition that reaches its own placeholder is a cycle.
class Placeholder final : public ExprNode {
public:
  static std::shared_ptr<const Placeholder> make(std::string name, Shape shape, DType dtype, Level level);
  const std::string &name() const { return name_; }
  static bool classof(const ExprNode *n) { return n->kind() == NodeKind::Placeholder; }

private:
  explicit Placeholder(std::string name) : ExprNode(NodeKind::Placeholder, {}), name_(std::move(name)) {}
  std::string name_;
};

} // namespace gnnjit::dsl
