// The CPU reference executor on arrays: every layer forward and backward in
// float64, plainly (ref/Executor.h). The oracle gnnjit's kernels are judged
// by, and what CPU tensors run on.
#include "python/core/Arrays.h"
#include "python/core/Bindings.h"

#include "dsl/Differentiate.h"
#include "ref/Executor.h"

#include <nanobind/stl/string.h>

namespace nb = nanobind;

namespace gnnjit::python {

namespace {

ref::TensorMap tensorsOf(const nb::dict &arrays) {
  ref::TensorMap out;
  for (auto [key, value] : arrays) {
    const std::string name = nb::cast<std::string>(key);
    out[name] = toTensor(nb::cast<AnyArray>(value), "input '" + name + "'");
  }
  return out;
}

nb::dict arraysOf(const ref::TensorMap &tensors) {
  nb::dict out;
  for (const auto &[name, t] : tensors)
    out[name.c_str()] = numpyArray(t);
  return out;
}

/// Converts the inputs, runs `evaluate` on them without the GIL (it may take
/// seconds on a large graph), and converts its results.
template <typename Evaluate> nb::dict evaluated(const nb::dict &inputs, Evaluate &&evaluate) {
  const ref::TensorMap in = tensorsOf(inputs);
  ref::TensorMap out;
  {
    nb::gil_scoped_release release;
    out = evaluate(in);
  }
  return arraysOf(out);
}

} // namespace

void registerReference(nb::module_ &m) {
  m.def(
      "reference_forward",
      [](const dsl::Layer &layer, const graph::Graph &graph, const nb::dict &inputs, uint64_t seed) {
        return evaluated(inputs, [&](const ref::TensorMap &in) { return ref::forward(layer, graph, in, seed); });
      },
      nb::arg("layer"), nb::arg("graph"), nb::arg("inputs"), nb::arg("seed") = 0,
      "The layer's outputs in float64 on the CPU. inputs: every input by name (node: num_nodes rows, edge: one row "
      "per edge_index column, param: one row), float32 or float64; seed: what attention dropout draws from");
  m.def(
      "reference_backward",
      [](const dsl::Layer &layer, const graph::Graph &graph, const nb::dict &inputs, uint64_t seed) {
        return evaluated(inputs, [&](const ref::TensorMap &in) {
          return ref::backward(layer, dsl::differentiate(layer), graph, in, seed);
        });
      },
      nb::arg("layer"), nb::arg("graph"), nb::arg("inputs"), nb::arg("seed") = 0,
      "The gradient of every input in float64 on the CPU. inputs: those of reference_forward and d_<output> for "
      "each output (num_nodes rows); seed: the forward's");
}

} // namespace gnnjit::python
