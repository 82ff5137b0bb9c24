// The surface users write layers in: an Expr handle with operators, and free
// functions for everything else. All of it only builds nodes; nothing is
// evaluated here.
#pragma once

#include "dsl/Expr.h"

namespace gnnjit::dsl {

/// A value in a layer under construction. Converts from a number (a
/// constant) so `2.0 * x` and `x + 1` read naturally.
class Expr {
public:
  Expr() = default;
  Expr(ExprPtr node) : node_(std::move(node)) {}
  Expr(double constant) : node_(Constant::make(constant)) {}
  Expr(int constant) : Expr(static_cast<double>(constant)) {}

  const ExprPtr &node() const { return node_; }
  const ExprNode *operator->() const { return node_.get(); }
  explicit operator bool() const { return node_ != nullptr; }
  Shape shape() const { return node_->shape(); }

private:
  ExprPtr node_;
};

Expr operator+(const Expr &a, const Expr &b);
Expr operator-(const Expr &a, const Expr &b);
Expr operator*(const Expr &a, const Expr &b);
Expr operator/(const Expr &a, const Expr &b);
Expr operator-(const Expr &x);

Expr exp(const Expr &x);
Expr log(const Expr &x);
Expr sqrt(const Expr &x);
Expr rsqrt(const Expr &x);
Expr relu(const Expr &x);
Expr leakyRelu(const Expr &x, double negativeSlope = 0.01);
Expr elu(const Expr &x, double alpha = 1.0);
Expr sigmoid(const Expr &x);
Expr tanh(const Expr &x);
Expr abs(const Expr &x);
Expr min(const Expr &a, const Expr &b);
Expr max(const Expr &a, const Expr &b);
/// 1 where a > b (a >= b), else 0.
Expr greater(const Expr &a, const Expr &b);
Expr greaterEqual(const Expr &a, const Expr &b);
/// cond != 0 ? a : b; only the chosen side's value is used.
Expr select(const Expr &cond, const Expr &a, const Expr &b);
/// x * factor, for a compile-time constant factor.
Expr scale(const Expr &x, double factor);

/// Sum over an axis (per head for Axis::Dim): [h, d] -> [h, 1].
Expr sum(const Expr &x, Axis axis = Axis::Dim);
/// sum(a * b, Axis::Dim): one dot product per head.
Expr dot(const Expr &a, const Expr &b);
/// [h, d] -> [1, h * d]: heads side by side, as PyG's concat=True.
Expr concatHeads(const Expr &x);
/// [1, h * d] -> [h, d].
Expr splitHeads(const Expr &x, int64_t heads);
/// Mean over heads, as PyG's concat=False: [h, d] -> [1, d].
Expr meanHeads(const Expr &x);

/// Normalizes a per-edge, per-head score over the edges into each node. Only
/// valid as a factor of a Sum aggregation's message.
Expr edgeSoftmax(const Expr &score);
/// Reduces a per-edge message over the edges into each node.
Expr aggregate(Reduce reduce, const Expr &message);

/// Graph quantities: degrees at either end of an edge, the edge weight.
Expr inDegree(Level at);
Expr outDegree(Level at);
Expr edgeWeight();
Expr weightedInDegree(Level at);
/// Dropout of attention coefficients (PyG's GATConv dropout): a per-edge,
/// per-head [heads, 1] factor, 1 / (1 - p) for a kept edge and 0 for a
/// dropped one (each dropped with probability p), drawn from the seed of
/// each call and the edge's id, so a backward given its forward's seed
/// drops the same edges and no mask is stored. Only valid in the value of
/// a softmax-weighted message: edgeSoftmax(s) * (attentionDropout(p, H) * v).
/// p = 0 gives the constant 1 (no dropout); p outside [0, 1) is an error.
Expr attentionDropout(double probability, int64_t heads);

} // namespace gnnjit::dsl
