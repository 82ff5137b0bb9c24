#include "dsl/Layer.h"
#include "support/Error.h"

#include <doctest/doctest.h>

using namespace gnnjit;
using namespace gnnjit::dsl;

namespace {

std::string buildError(const LayerBuilder &b) {
  try {
    (void)b.build();
  } catch (const UserError &e) {
    return e.what();
  }
  return "(built without error)";
}

#define CHECK_MENTIONS(text, part) CHECK_MESSAGE((text).find(part) != std::string::npos, "message: " << (text))

} // namespace

TEST_CASE("shapes that do not broadcast name the node and both shapes") {
  LayerBuilder b("bad_shapes");
  auto x = b.srcInput("x", {4, 32});
  auto y = b.dstInput("y", {2, 32});
  b.output("out", aggregate(Reduce::Sum, x + y));
  const std::string e = buildError(b);
  CHECK_MENTIONS(e, "layer 'bad_shapes'");
  CHECK_MENTIONS(e, "add of shapes [4, 32] and [2, 32], which do not broadcast");
  CHECK_MENTIONS(e, "at   %2 = add %0, %1");
  CHECK_MENTIONS(e, "with %0 = x@src : [4, 32] f32 src");
}

TEST_CASE("mixing f16 and bf16 is a dtype error") {
  LayerBuilder b("mixed");
  auto x = b.srcInput("x", {8}, DType::F16);
  auto y = b.dstInput("y", {8}, DType::BF16);
  b.output("out", aggregate(Reduce::Sum, x * y));
  const std::string e = buildError(b);
  CHECK_MENTIONS(e, "mixes f16 and bf16 values");
  CHECK_MENTIONS(e, "same dtype");
}

TEST_CASE("edgeSoftmax outside an aggregation") {
  LayerBuilder b("loose_softmax");
  auto x = b.srcInput("x", {4, 8});
  auto s = sum(x, Axis::Dim);
  auto alpha = edgeSoftmax(s);
  b.output("out", aggregate(Reduce::Sum, exp(alpha) * x));
  const std::string e = buildError(b);
  CHECK_MENTIONS(e, "edgeSoftmax used outside an aggregation's message");
  CHECK_MENTIONS(e, "aggregate(Reduce::Sum, edgeSoftmax(score) * value)");
}

TEST_CASE("edgeSoftmax under a max aggregation") {
  LayerBuilder b("max_softmax");
  auto x = b.srcInput("x", {4, 8});
  b.output("out", aggregate(Reduce::Max, edgeSoftmax(sum(x, Axis::Dim)) * x));
  CHECK_MENTIONS(buildError(b), "outside a Sum aggregation's message");
}

TEST_CASE("edgeSoftmax of a vector asks for a per-head score") {
  LayerBuilder b("vector_softmax");
  auto x = b.srcInput("x", {4, 8});
  b.output("out", aggregate(Reduce::Sum, edgeSoftmax(x) * x));
  CHECK_MENTIONS(buildError(b), "edgeSoftmax needs one score per edge and head ([heads, 1]), got [4, 8]");
}

TEST_CASE("an aggregation of an aggregation") {
  LayerBuilder b("nested");
  auto x = b.nodeInput("x", {8});
  auto inner = aggregate(Reduce::Sum, x.src());
  b.output("out", aggregate(Reduce::Sum, inner * 2.0));
  const std::string e = buildError(b);
  CHECK_MENTIONS(e, "an aggregation of an aggregation");
  CHECK_MENTIONS(e, "split it into two layers");
}

TEST_CASE("an aggregation result combined with per-edge values") {
  LayerBuilder b("mixed_levels");
  auto x = b.nodeInput("x", {8});
  auto agg = aggregate(Reduce::Sum, x.src());
  b.output("out", aggregate(Reduce::Sum, x.src()) + agg * x.src());
  CHECK_MENTIONS(buildError(b), "an aggregation result is combined with per-edge values");
}

TEST_CASE("outputs must be aggregated per-node values") {
  {
    LayerBuilder b("edge_out");
    auto x = b.srcInput("x", {8});
    auto y = b.dstInput("y", {8});
    b.output("out", x * y);
    CHECK_MENTIONS(buildError(b), "output 'out' is one value per edge");
  }
  {
    LayerBuilder b("node_out");
    auto y = b.dstInput("y", {8});
    b.output("out", relu(y));
    CHECK_MENTIONS(buildError(b), "output 'out' never aggregates over edges");
  }
  {
    LayerBuilder b("no_out");
    (void)b.srcInput("x", {8});
    CHECK_MENTIONS(buildError(b), "has no output");
  }
}

TEST_CASE("unused inputs") {
  LayerBuilder b("unused");
  auto x = b.srcInput("x", {8});
  (void)b.param("w", {8});
  b.output("out", aggregate(Reduce::Sum, x));
  const std::string e = buildError(b);
  CHECK_MENTIONS(e, "param input 'w' is declared but no output uses it");
  CHECK_MENTIONS(e, "remove it or use it");
}

TEST_CASE("cycles through declared values") {
  LayerBuilder b("cyclic");
  auto x = b.srcInput("x", {8});
  auto h = b.declare("h", {8});
  auto g = b.declare("g", {8});
  b.define(h, relu(g) + x);
  b.define(g, h * 2.0);
  b.output("out", aggregate(Reduce::Sum, h));
  const std::string e = buildError(b);
  CHECK_MENTIONS(e, "is defined in terms of itself (h -> g -> h)");
  CHECK_MENTIONS(e, "must not have cycles");
}

TEST_CASE("declared values: undefined, redefined, wrong shape") {
  {
    LayerBuilder b("undefined");
    auto x = b.srcInput("x", {8});
    auto h = b.declare("h", {8});
    b.output("out", aggregate(Reduce::Sum, h * x));
    CHECK_MENTIONS(buildError(b), "declared value 'h' is never defined");
  }
  {
    LayerBuilder b("reshaped");
    auto x = b.srcInput("x", {8});
    auto h = b.declare("h", {4});
    b.define(h, x);
    b.output("out", aggregate(Reduce::Sum, x));
    CHECK_MENTIONS(buildError(b), "declared value 'h' has shape [1, 4] but is defined with shape [1, 8]");
  }
}

TEST_CASE("names and declarations") {
  {
    LayerBuilder b("1bad");
    CHECK_MENTIONS(buildError(b), "layer name '1bad' is not an identifier");
  }
  {
    LayerBuilder b("twice");
    auto x = b.srcInput("x", {8});
    auto y = b.dstInput("x", {8});
    b.output("out", aggregate(Reduce::Sum, x * y));
    CHECK_MENTIONS(buildError(b), "input 'x' is declared twice");
  }
  {
    LayerBuilder b("bad_shape");
    auto x = b.srcInput("x", {0, 8});
    b.output("out", aggregate(Reduce::Sum, x));
    CHECK_MENTIONS(buildError(b), "shape {0, 8} is not {}, {dim} or {heads, dim}");
  }
  {
    LayerBuilder other("other");
    auto foreign = other.srcInput("x", {8});
    LayerBuilder b("borrower");
    auto y = b.dstInput("y", {8});
    b.output("out", aggregate(Reduce::Sum, foreign * y));
    CHECK_MENTIONS(buildError(b), "uses input 'x' of another layer builder");
  }
  {
    LayerBuilder b("empty_expr");
    auto x = b.srcInput("x", {8});
    b.output("out", aggregate(Reduce::Sum, x * Expr()));
    CHECK_MENTIONS(buildError(b), "an operand is an empty expression");
  }
}

TEST_CASE("degrees and edge weights are read where they exist") {
  LayerBuilder b("weights_at_src");
  auto x = b.srcInput("x", {8});
  b.output("out", aggregate(Reduce::Sum, x * GraphValue::make(GraphQuantity::EdgeWeight, Level::Src)));
  CHECK_MENTIONS(buildError(b), "edge_weight cannot be read at src");
}
