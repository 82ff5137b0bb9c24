// A message-passing layer: named inputs, named outputs, and the expression
// DAG between them. LayerBuilder makes one; build() validates it and every
// user error names the layer, the node (printed) and the fix.
#pragma once

#include "dsl/Ops.h"

#include <initializer_list>
#include <string>
#include <vector>

namespace gnnjit::dsl {

struct LayerOutput {
  std::string name;
  ExprPtr value;
};

class Layer {
public:
  const std::string &name() const { return name_; }
  /// Inputs in declaration order.
  const std::vector<InputPtr> &inputs() const { return inputs_; }
  const std::vector<LayerOutput> &outputs() const { return outputs_; }
  /// The input of that name, or null.
  InputPtr findInput(std::string_view name) const;

  /// Stable readable text: inputs, one line per node, outputs.
  std::string print() const;
  /// Structural hash (FNV-1a of print()): equal for the same layer on any
  /// run and machine.
  uint64_t hash() const;
  std::string hashHex() const;
  /// Whether a call draws attention dropout (and so needs a seed per call).
  bool dropsAttention() const;

  /// The same layer with other output values (for passes that rewrite the
  /// expressions; the caller keeps the outputs' meaning).
  Layer withOutputs(std::vector<LayerOutput> outputs) const;

private:
  friend class LayerBuilder;
  std::string name_;
  std::vector<InputPtr> inputs_;
  std::vector<LayerOutput> outputs_;
};

/// {} is a scalar, {dim} a feature vector, {heads, dim} per-head features.
struct ShapeArg {
  ShapeArg(std::initializer_list<int64_t> dims);
  ShapeArg(Shape s) : shape(s) {}
  Shape shape;
  std::string problem; ///< non-empty when the dims were not 0, 1 or 2 positive numbers
};

/// A node input: one value per node, readable at either end of an edge.
class NodeInput {
public:
  NodeInput() = default;
  explicit NodeInput(InputPtr decl) : decl_(std::move(decl)) {}
  /// x_j: the value at the source of each edge j -> i.
  Expr src() const { return InputRef::make(decl_, Level::Src); }
  /// x_i: the value at the destination (also usable after aggregation).
  Expr dst() const { return InputRef::make(decl_, Level::Dst); }
  const InputPtr &decl() const { return decl_; }

private:
  InputPtr decl_;
};

class LayerBuilder {
public:
  explicit LayerBuilder(std::string name);

  NodeInput nodeInput(std::string name, ShapeArg shape, DType dtype = DType::F32);
  /// A node input read only at edge sources (x_j).
  Expr srcInput(std::string name, ShapeArg shape, DType dtype = DType::F32);
  /// A node input read only at destinations (x_i).
  Expr dstInput(std::string name, ShapeArg shape, DType dtype = DType::F32);
  /// One value per edge, in the graph's original edge order (PyG's edge_attr).
  Expr edgeInput(std::string name, ShapeArg shape, DType dtype = DType::F32);
  /// A learnable value shared by all edges and nodes.
  Expr param(std::string name, ShapeArg shape, DType dtype = DType::F32);

  /// A value used before it is defined; define() it before build().
  Expr declare(std::string name, ShapeArg shape, DType dtype = DType::F32);
  void define(const Expr &declared, const Expr &value);

  void output(std::string name, const Expr &value);

  /// Validates and returns the layer; throws UserError on the first problem.
  Layer build() const;

private:
  InputPtr declareInput(std::string name, ShapeArg shape, DType dtype, InputKind kind);
  void problem(std::string message);

  struct Definition {
    ExprPtr placeholder;
    ExprPtr value; ///< null until defined
  };

  std::string name_;
  std::vector<InputPtr> inputs_;
  std::vector<LayerOutput> outputs_;
  std::vector<Definition> definitions_;
  std::vector<std::string> problems_;
};

} // namespace gnnjit::dsl
