// Emits CUDA code that computes one element (h, d) of a DSL expression, for
// the edge or node a kernel is working on. Leaves are read through the
// context (kernels decide where inputs, degrees and saved values live);
// broadcasting follows dsl/Type.h: an operand axis of size 1 reads index 0.
// Sums over an axis become a serial loop in the emitting thread.
#pragma once

#include "codegen/SourceWriter.h"
#include "dsl/Expr.h"

#include <functional>
#include <map>
#include <string>

namespace gnnjit::codegen {

/// The element of a [heads, dim] value an input is read at: head `h` and
/// column `d` (C int expressions) of a row of `dim` columns per head.
struct ElementIndex {
  std::string h, d;
  int64_t dim = 1;
  /// >= 0: (h, d) are the ones a caller asked for with ExprEmitter::element's
  /// `lane` (element d0 + lane of the head a kernel's lanes hold), no
  /// broadcast or loop between; the caller may read it from a vector it
  /// loaded. -1 otherwise.
  int lane = -1;
  /// The flat element, "(h) * dim + (d)": an int expression in [0, heads * dim).
  std::string flat() const;
};

struct ExprEmitContext {
  /// C expression reading element `at` of an input at a level: e.g.
  /// "x[(long long)j * 32 + (flat)]".
  std::function<std::string(const dsl::InputDecl &, dsl::Level, const ElementIndex &element)> readInput;
  /// C expression of a graph quantity at its level (e.g. "in_degree[j]"),
  /// of head `h` (an int expression) where it has heads.
  std::function<std::string(const dsl::GraphValue &, const std::string &h)> graphValue;
  /// Nodes a kernel computes itself (aggregates, softmax probabilities,
  /// saved values): C expression of element `offset`, or empty when the
  /// kernel has none for this node (then emitting it is an internal error).
  std::function<std::string(const dsl::ExprNode &, const std::string &offset)> readComputed;
  /// A sum over an axis the kernel has computed already (attention's
  /// per-head sums, reduced across lanes or read from a buffer): C
  /// expression of element `offset`, or empty (then it becomes a loop).
  std::function<std::string(const dsl::ExprNode &, const std::string &offset)> computedSum;
  /// A saved softmax probability (alpha) the kernel recomputes as
  /// exp(score - lse): C expression of head `h`'s log-sum-exp at the edge's
  /// destination, or empty when nothing saved it.
  std::function<std::string(const dsl::Saved &, const std::string &h)> softmaxLse;
  /// Sums over an axis accumulate in double (attention kernels: a difference
  /// of two dot products, computed by different kernels, then cancels exactly
  /// where it should).
  bool doubleSums = false;
  /// A reshaped input is read at the reshape's own element (element (h, d)
  /// of the view is flat element h x dim + d of the input's row), which a
  /// caller's readInput can take from a vector, rather than through a flat
  /// index variable.
  bool flatInputViews = false;
};

class ExprEmitter {
public:
  ExprEmitter(SourceWriter &writer, ExprEmitContext context) : w_(writer), ctx_(std::move(context)) {}

  /// Emits statements computing element (h, d) of `e` (h, d: C int
  /// expressions) and returns the name of the float variable holding it.
  /// Values emitted earlier at the same scope for the same (node, h, d) are
  /// reused; call forget() when leaving the scope they were emitted in.
  /// `lane` >= 0 names (h, d) as element d0 + lane of a kernel's lanes
  /// (ElementIndex::lane) wherever an input is read at them.
  std::string element(const dsl::ExprPtr &e, const std::string &h, const std::string &d, int lane = -1);
  void forget() { cache_.clear(); }

private:
  std::string emit(const dsl::ExprNode &n, const std::string &h, const std::string &d);
  std::string operand(const dsl::ExprPtr &op, const std::string &h, const std::string &d);

  /// The input read at (h, d) of a node of `dim` columns per head.
  ElementIndex indexOf(const std::string &h, const std::string &d, int64_t dim) const;

  SourceWriter &w_;
  ExprEmitContext ctx_;
  /// The element the last element() call named a lane's, and which lane.
  std::string laneH_, laneD_;
  int lane_ = -1;
  std::map<std::tuple<const dsl::ExprNode *, std::string, std::string>, std::string> cache_;
};

/// An exact C spelling of a constant as float ("float(0.20000000000000001)").
std::string floatLiteral(double value);

} // namespace gnnjit::codegen
