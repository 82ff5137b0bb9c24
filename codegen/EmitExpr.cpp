#include "codegen/EmitExpr.h"

#include "lower/Stages.h"
#include "support/Error.h"

#include <fmt/format.h>

namespace gnnjit::codegen {

using namespace gnnjit::dsl;
using llvm::cast;

std::string floatLiteral(double value) { return fmt::format("float({:.17g})", value); }

std::string ElementIndex::flat() const { return fmt::format("({}) * {} + ({})", h, dim, d); }

std::string ExprEmitter::element(const ExprPtr &e, const std::string &h, const std::string &d, int lane) {
  laneH_ = h;
  laneD_ = d;
  lane_ = lane;
  return operand(e, h, d);
}

ElementIndex ExprEmitter::indexOf(const std::string &h, const std::string &d, int64_t dim) const {
  return {h, d, dim, lane_ >= 0 && h == laneH_ && d == laneD_ ? lane_ : -1};
}

/// Element (h, d) of an operand that may broadcast: size-1 axes read 0.
std::string ExprEmitter::operand(const ExprPtr &op, const std::string &h, const std::string &d) {
  const std::string oh = op->shape().heads == 1 ? "0" : h;
  const std::string od = op->shape().dim == 1 ? "0" : d;
  const auto key = std::make_tuple(op.get(), oh, od);
  if (auto it = cache_.find(key); it != cache_.end())
    return it->second;
  std::string value = emit(*op, oh, od);
  cache_.emplace(key, value);
  return value;
}

namespace {

std::string unaryCode(const Unary &u, const std::string &x) {
  const std::string a = floatLiteral(u.attribute());
  switch (u.op()) {
  case UnaryOp::Neg:
    return fmt::format("-{}", x);
  case UnaryOp::Exp:
    return fmt::format("expf({})", x);
  case UnaryOp::Log:
    return fmt::format("logf({})", x);
  case UnaryOp::Sqrt:
    return fmt::format("sqrtf({})", x);
  case UnaryOp::Rsqrt:
    return fmt::format("(1.0f / sqrtf({}))", x); // exact rounding, unlike rsqrtf
  case UnaryOp::Relu:
    return fmt::format("({0} > 0.0f ? {0} : 0.0f)", x);
  case UnaryOp::LeakyRelu:
    return fmt::format("({0} > 0.0f ? {0} : {0} * {1})", x, a);
  case UnaryOp::Elu:
    return fmt::format("({0} > 0.0f ? {0} : {1} * expm1f({0}))", x, a);
  case UnaryOp::Sigmoid:
    return fmt::format("(1.0f / (1.0f + expf(-{})))", x);
  case UnaryOp::Tanh:
    return fmt::format("tanhf({})", x);
  case UnaryOp::Abs:
    return fmt::format("fabsf({})", x);
  }
  return "?";
}

std::string binaryCode(BinaryOp op, const std::string &a, const std::string &b) {
  switch (op) {
  case BinaryOp::Add:
    return fmt::format("{} + {}", a, b);
  case BinaryOp::Sub:
    return fmt::format("{} - {}", a, b);
  case BinaryOp::Mul:
    return fmt::format("{} * {}", a, b);
  case BinaryOp::Div:
    return fmt::format("{} / {}", a, b);
  case BinaryOp::Min: // ties and NaN as the reference: left operand unless right is smaller
    return fmt::format("({1} < {0} ? {1} : {0})", a, b);
  case BinaryOp::Max:
    return fmt::format("({1} > {0} ? {1} : {0})", a, b);
  case BinaryOp::Greater:
    return fmt::format("({} > {} ? 1.0f : 0.0f)", a, b);
  case BinaryOp::GreaterEqual:
    return fmt::format("({} >= {} ? 1.0f : 0.0f)", a, b);
  }
  return "?";
}

} // namespace

std::string ExprEmitter::emit(const ExprNode &n, const std::string &h, const std::string &d) {
  const std::string offset = fmt::format("({}) * {} + ({})", h, n.shape().dim, d);
  std::string code;
  switch (n.kind()) {
  case NodeKind::InputRef:
    code = ctx_.readInput(*cast<InputRef>(&n)->input(), n.level(), indexOf(h, d, n.shape().dim));
    break;
  case NodeKind::GraphValue:
    code = ctx_.graphValue(*cast<GraphValue>(&n), h);
    break;
  case NodeKind::Constant:
    return floatLiteral(cast<Constant>(&n)->value());
  case NodeKind::Unary:
    code = unaryCode(*cast<Unary>(&n), operand(n.operands()[0], h, d));
    break;
  case NodeKind::Binary:
    code = binaryCode(cast<Binary>(&n)->op(), operand(n.operands()[0], h, d), operand(n.operands()[1], h, d));
    break;
  case NodeKind::Select: {
    const std::string c = operand(n.operands()[0], h, d), a = operand(n.operands()[1], h, d),
                      b = operand(n.operands()[2], h, d);
    code = fmt::format("({} != 0.0f ? {} : {})", c, a, b);
    break;
  }
  case NodeKind::SumAxis: {
    // A sum the kernel computed already (attention's per-head sums).
    if (code = ctx_.computedSum ? ctx_.computedSum(n, offset) : std::string(); !code.empty())
      break;
    const ExprPtr &x = n.operands()[0];
    const bool overDim = cast<SumAxis>(&n)->axis() == Axis::Dim;
    const std::string acc = w_.fresh("sum"), k = w_.fresh(overDim ? "d" : "h");
    if (ctx_.doubleSums)
      w_.line("double {} = 0.0;", acc);
    else
      w_.line("float {} = 0.0f;", acc);
    {
      auto loop = w_.scope("for (int {0} = 0; {0} < {1}; ++{0})", k, overDim ? x->shape().dim : x->shape().heads);
      auto saved = std::move(cache_); // values inside the loop stay inside it
      cache_.clear();
      w_.line("{} += {};", acc, overDim ? operand(x, h, k) : operand(x, k, d));
      cache_ = std::move(saved);
    }
    return acc;
  }
  case NodeKind::BroadcastTo:
    return operand(n.operands()[0], h, d);
  case NodeKind::Reshape: {
    const Shape from = n.operands()[0]->shape();
    if (const auto *ref = llvm::dyn_cast<InputRef>(n.operands()[0].get()); ref && ctx_.flatInputViews) {
      code = ctx_.readInput(*ref->input(), n.operands()[0]->level(), indexOf(h, d, n.shape().dim));
      break;
    }
    const std::string flat = w_.fresh("flat");
    w_.line("const int {} = {};", flat, offset);
    return operand(n.operands()[0], fmt::format("{} / {}", flat, from.dim), fmt::format("{} % {}", flat, from.dim));
  }
  case NodeKind::Saved:
    // A forward value that reads no aggregate (tanh(x_j * e) for tanh's
    // derivative) is recomputed where it is needed rather than stored.
    if (const auto *saved = cast<Saved>(&n); saved->what() == SavedKind::Value && !lower::readsComputed(saved->forward()))
      return operand(saved->forward(), h, d);
    [[fallthrough]];
  case NodeKind::EdgeSoftmax:
  case NodeKind::Aggregate:
    code = ctx_.readComputed ? ctx_.readComputed(n, offset) : std::string();
    if (const auto *alpha = llvm::dyn_cast<Saved>(&n);
        code.empty() && alpha && alpha->what() == SavedKind::SoftmaxProb && ctx_.softmaxLse) {
      // alpha = exp(score - lse): the score recomputed at this edge, the
      // log-sum-exp the forward saved at its destination.
      const std::string lse = ctx_.softmaxLse(*alpha, h);
      if (!lse.empty())
        code = fmt::format("expf({} - {})", operand(alpha->forward()->operands()[0], h, "0"), lse);
    }
    if (code.empty())
      throwInternalError("emitting a {} node the kernel does not compute", nodeKindName(n.kind()));
    break;
  case NodeKind::Placeholder:
    throwInternalError("emitting a placeholder");
  }
  const std::string name = w_.fresh("v");
  w_.line("const float {} = {};", name, code);
  return name;
}

} // namespace gnnjit::codegen
