// gnnjit.Layer: the library's layers (each the sparse middle of a PyG 2.8
// convolution: its inputs are the caller's projections) with their inputs,
// outputs and options, and export of their kernels as .cu files.
#include "python/core/Bindings.h"

#include "dsl/Layer.h"
#include "autotune/KernelExport.h"
#include "layers/Library.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fmt/format.h>

namespace nb = nanobind;

namespace gnnjit::python {

namespace {

/// The options given (None: the layer's default); the library refuses a
/// knob a layer does not read when it is set away from its default.
layers::LayerOptions optionsOf(int64_t dim, std::optional<int64_t> heads,
                               std::optional<bool> concat, std::optional<double> negativeSlope,
                               std::optional<double> eps, std::optional<std::string> aggr, bool weighted,
                               bool edgeFeatures, double attentionDropout, bool bipartite) {
  layers::LayerOptions o;
  o.dim = dim;
  if (heads)
    o.heads = *heads;
  if (concat)
    o.concat = *concat;
  if (negativeSlope)
    o.negativeSlope = *negativeSlope;
  if (eps) { // a fixed eps, as PyG's train_eps=False
    o.eps = *eps;
    o.trainEps = false;
  }
  if (aggr)
    o.aggregation = *aggr;
  o.weighted = weighted;
  o.edgeFeatures = edgeFeatures;
  o.attentionDropout = attentionDropout;
  o.bipartite = bipartite;
  return o;
}

nb::list inputsOf(const dsl::Layer &layer) {
  nb::list out;
  for (const dsl::InputPtr &in : layer.inputs()) {
    nb::dict d;
    d["name"] = in->name;
    d["kind"] = std::string(dsl::inputKindName(in->kind));
    d["heads"] = in->shape.heads;
    d["dim"] = in->shape.dim;
    d["size"] = in->shape.size();
    out.append(d);
  }
  return out;
}

nb::list outputsOf(const dsl::Layer &layer) {
  nb::list out;
  for (const dsl::LayerOutput &o : layer.outputs()) {
    nb::dict d;
    d["name"] = o.name;
    d["heads"] = o.value->shape().heads;
    d["dim"] = o.value->shape().dim;
    d["size"] = o.value->shape().size();
    out.append(d);
  }
  return out;
}

nb::dict exportLayer(const dsl::Layer &layer, const std::string &dir, std::optional<std::string> arch, bool backward) {
  autotune::ExportSettings settings;
  if (arch)
    settings.arch = *arch;
  settings.backward = backward;
  const autotune::ExportSummary s = autotune::exportKernels(layer, settings, dir);
  nb::dict out;
  out["family"] = s.family;
  out["arch"] = s.arch;
  out["modules"] = s.modules;
  out["files"] = s.files;
  return out;
}

} // namespace

void registerLayers(nb::module_ &m) {
  m.def(
      "library",
      [] {
        nb::list out;
        for (const layers::LayerInfo &info : layers::library()) {
          nb::dict d;
          d["name"] = info.name;
          d["summary"] = info.summary;
          d["pyg_class"] = info.pygClass;
          d["family"] = info.familyHint;
          d["options"] = info.options;
          d["outside"] = info.outside;
          out.append(d);
        }
        return out;
      },
      "the library's layers: name, formula, the PyG class each matches, its kernel family, its options and what "
      "the caller computes outside it");
  nb::class_<dsl::Layer>(m, "Layer", nb::is_weak_referenceable(), "A message-passing layer written in gnnjit's DSL.")
      .def_static(
          "from_library",
          [](const std::string &name, int64_t dim, std::optional<int64_t> heads, std::optional<bool> concat,
             std::optional<double> negativeSlope, std::optional<double> eps, std::optional<std::string> aggr,
             bool weighted, bool edgeFeatures, double attentionDropout, bool bipartite) {
            return layers::buildLayer(name, optionsOf(dim, heads, concat, negativeSlope, eps, aggr, weighted,
                                                      edgeFeatures, attentionDropout, bipartite));
          },
          nb::arg("name"), nb::arg("dim"), nb::arg("heads") = nb::none(), nb::arg("concat") = nb::none(),
          nb::arg("negative_slope") = nb::none(), nb::arg("eps") = nb::none(), nb::arg("aggr") = nb::none(),
          nb::arg("weighted") = false, nb::arg("edge_features") = false, nb::arg("attention_dropout") = 0.0,
          nb::arg("bipartite") = false,
          "A library layer (see gnnjit.library()); dim: features per head (PyG's out_channels) or the feature "
          "width; eps: GIN's fixed eps (train_eps=False; without it eps is a parameter input); attention_dropout: "
          "the probability of dropping an attention coefficient (gat, gatv2, transformer; drawn from each call's "
          "seed); bipartite: gat, gin read destinations' features from an input of their own, x_dst")
      .def_prop_ro("name", &dsl::Layer::name)
      .def_prop_ro("hash", &dsl::Layer::hashHex, "structural hash: equal for the same layer on any machine")
      .def_prop_ro("drops_attention", &dsl::Layer::dropsAttention,
                   "whether calls draw attention dropout (each call then takes a seed)")
      .def_prop_ro("inputs", &inputsOf, "name, kind (node, edge or param), heads, dim and size of each input")
      .def_prop_ro("outputs", &outputsOf, "name, heads, dim and size of each output")
      .def("export", &exportLayer, nb::arg("dir"), nb::arg("arch") = nb::none(), nb::arg("backward") = true,
           "Writes the layer's kernels into dir as gnnjit export does (.cu, .ptx, plan.json); needs no GPU")
      .def("__str__", &dsl::Layer::print)
      .def("__repr__", [](const dsl::Layer &l) {
        return fmt::format("gnnjit.Layer('{}', {} inputs, {} outputs, hash {})", l.name(), l.inputs().size(),
                           l.outputs().size(), l.hashHex());
      });
}

} // namespace gnnjit::python
