#include "dsl/Ops.h"

namespace gnnjit::dsl {

namespace {
Expr binary(BinaryOp op, const Expr &a, const Expr &b) { return Binary::make(op, a.node(), b.node()); }
Expr unary(UnaryOp op, const Expr &x, double attribute = 0) { return Unary::make(op, x.node(), attribute); }
} // namespace

Expr operator+(const Expr &a, const Expr &b) { return binary(BinaryOp::Add, a, b); }
Expr operator-(const Expr &a, const Expr &b) { return binary(BinaryOp::Sub, a, b); }
Expr operator*(const Expr &a, const Expr &b) { return binary(BinaryOp::Mul, a, b); }
Expr operator/(const Expr &a, const Expr &b) { return binary(BinaryOp::Div, a, b); }
Expr operator-(const Expr &x) { return unary(UnaryOp::Neg, x); }

Expr exp(const Expr &x) { return unary(UnaryOp::Exp, x); }
Expr log(const Expr &x) { return unary(UnaryOp::Log, x); }
Expr sqrt(const Expr &x) { return unary(UnaryOp::Sqrt, x); }
Expr rsqrt(const Expr &x) { return unary(UnaryOp::Rsqrt, x); }
Expr relu(const Expr &x) { return unary(UnaryOp::Relu, x); }
Expr leakyRelu(const Expr &x, double negativeSlope) { return unary(UnaryOp::LeakyRelu, x, negativeSlope); }
Expr elu(const Expr &x, double alpha) { return unary(UnaryOp::Elu, x, alpha); }
Expr sigmoid(const Expr &x) { return unary(UnaryOp::Sigmoid, x); }
Expr tanh(const Expr &x) { return unary(UnaryOp::Tanh, x); }
Expr abs(const Expr &x) { return unary(UnaryOp::Abs, x); }
Expr min(const Expr &a, const Expr &b) { return binary(BinaryOp::Min, a, b); }
Expr max(const Expr &a, const Expr &b) { return binary(BinaryOp::Max, a, b); }
Expr greater(const Expr &a, const Expr &b) { return binary(BinaryOp::Greater, a, b); }
Expr greaterEqual(const Expr &a, const Expr &b) { return binary(BinaryOp::GreaterEqual, a, b); }
Expr select(const Expr &cond, const Expr &a, const Expr &b) { return Select::make(cond.node(), a.node(), b.node()); }
Expr scale(const Expr &x, double factor) { return x * Expr(factor); }

Expr sum(const Expr &x, Axis axis) { return SumAxis::make(x.node(), axis); }
Expr dot(const Expr &a, const Expr &b) { return sum(a * b, Axis::Dim); }
Expr concatHeads(const Expr &x) {
  if (!x)
    return Reshape::make(nullptr, Shape::scalar());
  return Reshape::make(x.node(), Shape::vector(x.shape().size()));
}
Expr splitHeads(const Expr &x, int64_t heads) {
  if (!x)
    return Reshape::make(nullptr, Shape::scalar());
  const int64_t size = x.shape().size();
  return Reshape::make(x.node(), Shape{heads, heads > 0 ? size / heads : 0});
}
Expr meanHeads(const Expr &x) {
  if (!x)
    return sum(x, Axis::Heads);
  return sum(x, Axis::Heads) * Expr(1.0 / static_cast<double>(x.shape().heads));
}

Expr edgeSoftmax(const Expr &score) { return EdgeSoftmax::make(score.node()); }
Expr aggregate(Reduce reduce, const Expr &message) { return Aggregate::make(reduce, message.node(), Over::InEdges); }

Expr inDegree(Level at) { return GraphValue::make(GraphQuantity::InDegree, at); }
Expr outDegree(Level at) { return GraphValue::make(GraphQuantity::OutDegree, at); }
Expr weightedInDegree(Level at) { return GraphValue::make(GraphQuantity::WeightedInDegree, at); }
Expr attentionDropout(double probability, int64_t heads) {
  if (probability == 0.0)
    return Expr(1.0);
  return GraphValue::makeAttentionDropout(probability, heads);
}
Expr edgeWeight() { return GraphValue::make(GraphQuantity::EdgeWeight, Level::Edge); }

} // namespace gnnjit::dsl
