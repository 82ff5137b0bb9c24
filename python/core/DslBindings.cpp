// gnnjit.dsl: the layer builder in Python, as in C++ (dsl/Layer.h and
// dsl/Ops.h): inputs and parameters, Expr with arithmetic operators, the
// elementwise and per-head functions, edge_softmax and aggregate. build()
// validates and returns a gnnjit.Layer, which runs and exports as the
// library's layers do.
#include "python/core/Bindings.h"

#include "dsl/Layer.h"
#include "dsl/Ops.h"
#include "support/Error.h"

#include <nanobind/operators.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <fmt/format.h>

namespace nb = nanobind;

namespace gnnjit::python {

namespace {

using dsl::Expr;

/// () a scalar, (dim,) a feature vector, (heads, dim) per-head features.
dsl::ShapeArg shapeOf(const std::vector<int64_t> &dims) {
  switch (dims.size()) {
  case 0:
    return dsl::ShapeArg({});
  case 1:
    return dsl::ShapeArg({dims[0]});
  case 2:
    return dsl::ShapeArg({dims[0], dims[1]});
  default:
    throwUserError("a shape is (), (dim,) or (heads, dim); got {} sizes", dims.size());
  }
}

dsl::Reduce reduceOf(const std::string &name) {
  if (name == "sum")
    return dsl::Reduce::Sum;
  if (name == "mean")
    return dsl::Reduce::Mean;
  if (name == "max")
    return dsl::Reduce::Max;
  if (name == "min")
    return dsl::Reduce::Min;
  throwUserError("aggregate's reduce is 'sum', 'mean', 'max' or 'min'; got '{}'", name);
}

dsl::Level endOf(const std::string &name) {
  if (name == "src")
    return dsl::Level::Src;
  if (name == "dst")
    return dsl::Level::Dst;
  throwUserError("an edge's end is 'src' (j of j -> i) or 'dst' (i); got '{}'", name);
}

dsl::Axis axisOf(const std::string &name) {
  if (name == "dim")
    return dsl::Axis::Dim;
  if (name == "heads")
    return dsl::Axis::Heads;
  throwUserError("sum's axis is 'dim' (per head) or 'heads'; got '{}'", name);
}

std::string exprRepr(const Expr &e) {
  return fmt::format("gnnjit.dsl.Expr({}, {})", dsl::shapeText(e.shape()), dsl::levelName(e->level()));
}

void registerExpr(nb::module_ &d) {
  nb::class_<Expr>(d, "Expr", "A value in a layer under construction (nothing is evaluated here).")
      .def(nb::init_implicit<double>())
      .def_prop_ro("shape", [](const Expr &e) { return std::make_tuple(e.shape().heads, e.shape().dim); },
                   "(heads, dim)")
      .def(nb::self + nb::self)
      .def(nb::self - nb::self)
      .def(nb::self * nb::self)
      .def(nb::self / nb::self)
      .def(-nb::self)
      .def("__radd__", [](const Expr &a, double b) { return Expr(b) + a; })
      .def("__rsub__", [](const Expr &a, double b) { return Expr(b) - a; })
      .def("__rmul__", [](const Expr &a, double b) { return Expr(b) * a; })
      .def("__rtruediv__", [](const Expr &a, double b) { return Expr(b) / a; })
      .def("__repr__", &exprRepr);
  nb::class_<dsl::NodeInput>(d, "NodeInput", "A node input, readable at either end of an edge.")
      .def_prop_ro("src", &dsl::NodeInput::src, "x_j: the value at the source of each edge j -> i")
      .def_prop_ro("dst", &dsl::NodeInput::dst, "x_i: the value at the destination (also after aggregation)");
}

void registerBuilder(nb::module_ &d) {
  using dsl::LayerBuilder;
  const auto input = [](auto method) {
    return [method](LayerBuilder &b, const std::string &name, const std::vector<int64_t> &shape) {
      return (b.*method)(name, shapeOf(shape), dsl::DType::F32);
    };
  };
  nb::class_<LayerBuilder>(d, "LayerBuilder",
                           "Builds a message-passing layer: declare inputs and parameters, combine them into "
                           "expressions, name the outputs, build().")
      .def(nb::init<std::string>(), nb::arg("name"))
      .def("node_input", input(&LayerBuilder::nodeInput), nb::arg("name"), nb::arg("shape"),
           "one value per node, read at either end (.src, .dst)")
      .def("src_input", input(&LayerBuilder::srcInput), nb::arg("name"), nb::arg("shape"),
           "a node input read only at edge sources")
      .def("dst_input", input(&LayerBuilder::dstInput), nb::arg("name"), nb::arg("shape"),
           "a node input read only at destinations")
      .def("edge_input", input(&LayerBuilder::edgeInput), nb::arg("name"), nb::arg("shape"),
           "one value per edge, in edge_index's column order (PyG's edge_attr)")
      .def("param", input(&LayerBuilder::param), nb::arg("name"), nb::arg("shape"),
           "a learnable value shared by every edge and node")
      .def("output", &LayerBuilder::output, nb::arg("name"), nb::arg("value"))
      .def("build", &LayerBuilder::build, "validates and returns the gnnjit.Layer; gnnjit.Error names any problem");
}

void registerFunctions(nb::module_ &d) {
  for (const auto &[name, fn] : std::initializer_list<std::pair<const char *, Expr (*)(const Expr &)>>{
           {"exp", &dsl::exp},
           {"log", &dsl::log},
           {"sqrt", &dsl::sqrt},
           {"rsqrt", &dsl::rsqrt},
           {"relu", &dsl::relu},
           {"sigmoid", &dsl::sigmoid},
           {"tanh", &dsl::tanh},
           {"abs", &dsl::abs},
           {"concat_heads", &dsl::concatHeads},
           {"mean_heads", &dsl::meanHeads},
           {"edge_softmax", &dsl::edgeSoftmax}})
    d.def(name, fn, nb::arg("x"));
  for (const auto &[name, fn] : std::initializer_list<std::pair<const char *, Expr (*)(const Expr &, const Expr &)>>{
           {"minimum", &dsl::min},
           {"maximum", &dsl::max},
           {"greater", &dsl::greater},
           {"greater_equal", &dsl::greaterEqual},
           {"dot", &dsl::dot}})
    d.def(name, fn, nb::arg("a"), nb::arg("b"));
  d.def("leaky_relu", &dsl::leakyRelu, nb::arg("x"), nb::arg("negative_slope") = 0.01);
  d.def("elu", &dsl::elu, nb::arg("x"), nb::arg("alpha") = 1.0);
  d.def("select", &dsl::select, nb::arg("cond"), nb::arg("a"), nb::arg("b"), "cond != 0 ? a : b");
  d.def("scale", &dsl::scale, nb::arg("x"), nb::arg("factor"));
  d.def(
      "sum", [](const Expr &x, const std::string &axis) { return dsl::sum(x, axisOf(axis)); }, nb::arg("x"),
      nb::arg("axis") = "dim", "sum over 'dim' (one value per head) or 'heads'");
  d.def("split_heads", &dsl::splitHeads, nb::arg("x"), nb::arg("heads"));
  d.def(
      "aggregate", [](const std::string &reduce, const Expr &message) { return dsl::aggregate(reduceOf(reduce), message); },
      nb::arg("reduce"), nb::arg("message"), "reduces a per-edge message over the edges into each node");
  d.def("in_degree", [](const std::string &at) { return dsl::inDegree(endOf(at)); }, nb::arg("at"));
  d.def("out_degree", [](const std::string &at) { return dsl::outDegree(endOf(at)); }, nb::arg("at"));
  d.def("weighted_in_degree", [](const std::string &at) { return dsl::weightedInDegree(endOf(at)); }, nb::arg("at"));
  d.def("edge_weight", &dsl::edgeWeight, "the weight of each edge (the graph needs weights: edge_weight)");
  d.def("attention_dropout", &dsl::attentionDropout, nb::arg("p"), nb::arg("heads"),
        "per edge and head, 1/(1-p) or 0 (dropped with probability p), drawn from each call's seed; only in the "
        "value of a softmax-weighted message: edge_softmax(s) * (attention_dropout(p, heads) * v); p = 0 gives 1");
}

} // namespace

void registerDsl(nb::module_ &m) {
  nb::module_ d = m.def_submodule("dsl", "gnnjit's layer DSL: LayerBuilder, Expr and the operators");
  registerExpr(d);
  registerBuilder(d);
  registerFunctions(d);
}

} // namespace gnnjit::python
