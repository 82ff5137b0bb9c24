#include "ref/RowOps.h"

#include "support/Error.h"

#include <algorithm>
#include <cmath>

namespace gnnjit::ref {

using dsl::Shape;
using llvm::dyn_cast;

namespace {

/// Where element (h, d) of a broadcast result sits in an operand of shape
/// `in`: an axis of size 1 has stride 0.
struct Strides {
  int64_t h, d;
  explicit Strides(Shape in) : h(in.heads == 1 ? 0 : in.dim), d(in.dim == 1 ? 0 : 1) {}
  int64_t at(int64_t hh, int64_t dd) const { return hh * h + dd * d; }
};

template <typename F> void mapUnary(int64_t size, const double *x, double *out, F f) {
  for (int64_t k = 0; k < size; ++k)
    out[k] = f(x[k]);
}

void unary(const dsl::Unary &u, const double *x, double *out) {
  const int64_t n = u.shape().size();
  const double attr = u.attribute();
  switch (u.op()) {
  case dsl::UnaryOp::Neg:
    return mapUnary(n, x, out, [](double v) { return -v; });
  case dsl::UnaryOp::Exp:
    return mapUnary(n, x, out, [](double v) { return std::exp(v); });
  case dsl::UnaryOp::Log:
    return mapUnary(n, x, out, [](double v) { return std::log(v); });
  case dsl::UnaryOp::Sqrt:
    return mapUnary(n, x, out, [](double v) { return std::sqrt(v); });
  case dsl::UnaryOp::Rsqrt:
    return mapUnary(n, x, out, [](double v) { return 1.0 / std::sqrt(v); });
  case dsl::UnaryOp::Relu: // NaN stays NaN, as torch.relu
    return mapUnary(n, x, out, [](double v) { return v < 0 ? 0.0 : v; });
  case dsl::UnaryOp::LeakyRelu:
    return mapUnary(n, x, out, [attr](double v) { return v < 0 ? attr * v : v; });
  case dsl::UnaryOp::Elu:
    return mapUnary(n, x, out, [attr](double v) { return v < 0 ? attr * std::expm1(v) : v; });
  case dsl::UnaryOp::Sigmoid: // never exp of a large positive number
    return mapUnary(n, x, out, [](double v) {
      if (v >= 0)
        return 1.0 / (1.0 + std::exp(-v));
      const double e = std::exp(v);
      return e / (1.0 + e);
    });
  case dsl::UnaryOp::Tanh:
    return mapUnary(n, x, out, [](double v) { return std::tanh(v); });
  case dsl::UnaryOp::Abs:
    return mapUnary(n, x, out, [](double v) { return std::abs(v); });
  }
  throwInternalError("unary op {} has no reference implementation", static_cast<int>(u.op()));
}

template <typename F> void mapBinary(const dsl::Binary &b, const double *x, const double *y, double *out, F f) {
  const Shape s = b.shape();
  if (b.a()->shape() == s && b.b()->shape() == s) { // the common case, no broadcast
    for (int64_t k = 0; k < s.size(); ++k)
      out[k] = f(x[k], y[k]);
    return;
  }
  const Strides sx(b.a()->shape()), sy(b.b()->shape());
  for (int64_t h = 0; h < s.heads; ++h)
    for (int64_t d = 0; d < s.dim; ++d)
      out[h * s.dim + d] = f(x[sx.at(h, d)], y[sy.at(h, d)]);
}

void binary(const dsl::Binary &b, const double *x, const double *y, double *out) {
  // min/max: NaN wins (as torch.minimum); on ties the left operand, the side
  // the derivative goes to.
  const auto nan = [](double u, double v) { return std::isnan(u) || std::isnan(v); };
  switch (b.op()) {
  case dsl::BinaryOp::Add:
    return mapBinary(b, x, y, out, [](double u, double v) { return u + v; });
  case dsl::BinaryOp::Sub:
    return mapBinary(b, x, y, out, [](double u, double v) { return u - v; });
  case dsl::BinaryOp::Mul:
    return mapBinary(b, x, y, out, [](double u, double v) { return u * v; });
  case dsl::BinaryOp::Div:
    return mapBinary(b, x, y, out, [](double u, double v) { return u / v; });
  case dsl::BinaryOp::Min:
    return mapBinary(b, x, y, out, [nan](double u, double v) { return nan(u, v) ? u + v : (u <= v ? u : v); });
  case dsl::BinaryOp::Max:
    return mapBinary(b, x, y, out, [nan](double u, double v) { return nan(u, v) ? u + v : (u >= v ? u : v); });
  case dsl::BinaryOp::Greater:
    return mapBinary(b, x, y, out, [](double u, double v) { return u > v ? 1.0 : 0.0; });
  case dsl::BinaryOp::GreaterEqual:
    return mapBinary(b, x, y, out, [](double u, double v) { return u >= v ? 1.0 : 0.0; });
  }
  throwInternalError("binary op {} has no reference implementation", static_cast<int>(b.op()));
}

void select(const dsl::Select &sel, const double *c, const double *a, const double *b, double *out) {
  const Shape s = sel.shape();
  const Strides sc(sel.cond()->shape()), sa(sel.a()->shape()), sb(sel.b()->shape());
  // Reads only the chosen side, so a NaN or inf on the other never leaks.
  for (int64_t h = 0; h < s.heads; ++h)
    for (int64_t d = 0; d < s.dim; ++d)
      out[h * s.dim + d] = c[sc.at(h, d)] != 0 ? a[sa.at(h, d)] : b[sb.at(h, d)];
}

void sumAxis(const dsl::SumAxis &sa, const double *x, double *out) {
  const Shape in = sa.x()->shape();
  if (sa.axis() == dsl::Axis::Dim) {
    for (int64_t h = 0; h < in.heads; ++h) {
      double acc = 0;
      for (int64_t d = 0; d < in.dim; ++d)
        acc += x[h * in.dim + d];
      out[h] = acc;
    }
    return;
  }
  std::fill(out, out + in.dim, 0.0);
  for (int64_t h = 0; h < in.heads; ++h)
    for (int64_t d = 0; d < in.dim; ++d)
      out[d] += x[h * in.dim + d];
}

void broadcastTo(const dsl::BroadcastTo &bt, const double *x, double *out) {
  const Shape s = bt.shape();
  const Strides sx(bt.x()->shape());
  for (int64_t h = 0; h < s.heads; ++h)
    for (int64_t d = 0; d < s.dim; ++d)
      out[h * s.dim + d] = x[sx.at(h, d)];
}

} // namespace

bool isRowOp(const dsl::ExprNode &node) {
  switch (node.kind()) {
  case dsl::NodeKind::Constant:
  case dsl::NodeKind::Unary:
  case dsl::NodeKind::Binary:
  case dsl::NodeKind::Select:
  case dsl::NodeKind::SumAxis:
  case dsl::NodeKind::BroadcastTo:
  case dsl::NodeKind::Reshape:
    return true;
  default:
    return false;
  }
}

void computeRow(const dsl::ExprNode &node, const double *const *operands, double *out) {
  if (const auto *c = dyn_cast<dsl::Constant>(&node)) {
    out[0] = c->value();
  } else if (const auto *u = dyn_cast<dsl::Unary>(&node)) {
    unary(*u, operands[0], out);
  } else if (const auto *b = dyn_cast<dsl::Binary>(&node)) {
    binary(*b, operands[0], operands[1], out);
  } else if (const auto *s = dyn_cast<dsl::Select>(&node)) {
    select(*s, operands[0], operands[1], operands[2], out);
  } else if (const auto *sa = dyn_cast<dsl::SumAxis>(&node)) {
    sumAxis(*sa, operands[0], out);
  } else if (const auto *bt = dyn_cast<dsl::BroadcastTo>(&node)) {
    broadcastTo(*bt, operands[0], out);
  } else if (llvm::isa<dsl::Reshape>(&node)) { // row-major elements are unchanged
    std::copy(operands[0], operands[0] + node.shape().size(), out);
  } else {
    throwInternalError("computeRow() called on a {} node", dsl::nodeKindName(node.kind()));
  }
}

} // namespace gnnjit::ref
