// gnnjit.Graph: built once from PyG's edge_index (row 0 sources, row 1
// destinations; edge e is column e) and reused by every layer call. The
// CSR is by destination; each stored edge keeps its column as its id, so
// per-edge inputs stay in the caller's edge order.
#include "python/core/Arrays.h"
#include "python/core/Bindings.h"

#include "graph/DegreeStats.h"
#include "graph/Graph.h"
#include "support/Error.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <algorithm>

namespace nb = nanobind;

namespace gnnjit::python {

graph::SelfLoops parseSelfLoops(const std::string &text) {
  if (text == "keep")
    return graph::SelfLoops::Keep;
  if (text == "remove")
    return graph::SelfLoops::Remove;
  if (text == "add")
    return graph::SelfLoops::AddMissing;
  if (text == "replace")
    return graph::SelfLoops::Replace;
  if (text == "add_remaining")
    return graph::SelfLoops::AddRemaining;
  throwUserError("self_loops must be 'keep', 'remove', 'add' (weight 1 to nodes that have none), 'replace' "
                 "(remove all, then add one of weight 1 to every node, as PyG's remove_self_loops + "
                 "add_self_loops) or 'add_remaining' (one per node, of the weight of its last own loop or 1, as "
                 "PyG's add_remaining_self_loops); got '{}'",
                 text);
}

graph::IndexChoice parseIndex(const std::string &text) {
  if (text == "auto")
    return graph::IndexChoice::Auto;
  if (text == "int32")
    return graph::IndexChoice::Int32;
  if (text == "int64")
    return graph::IndexChoice::Int64;
  throwUserError("index must be 'auto' (int32 when the graph fits), 'int32' or 'int64'; got '{}'", text);
}

namespace {

graph::Graph fromEdgeIndex(const AnyArray &edgeIndex, std::optional<int64_t> numNodes,
                           const std::optional<AnyArray> &edgeWeight, const std::string &selfLoops, bool dedupe,
                           bool symmetrize, const std::string &index, float loopWeight) {
  if (edgeIndex.ndim() != 2 || edgeIndex.shape(0) != 2)
    throwUserError("edge_index must have shape [2, num_edges] (PyG's layout: row 0 sources, row 1 destinations); "
                   "got {} dimensions{}",
                   edgeIndex.ndim(), edgeIndex.ndim() >= 1 ? fmt::format(", {} rows", edgeIndex.shape(0)) : "");
  std::vector<std::vector<int64_t>> rows = toIntRows(edgeIndex, "edge_index");
  graph::EdgeList edges;
  edges.src = std::move(rows[0]);
  edges.dst = std::move(rows[1]);
  int64_t largest = -1;
  for (size_t e = 0; e < edges.src.size(); ++e)
    largest = std::max({largest, edges.src[e], edges.dst[e]});
  if (numNodes && *numNodes < 0)
    throwUserError("num_nodes must be at least 0; got {}", *numNodes);
  edges.numNodes = numNodes ? *numNodes : largest + 1;
  if (edgeWeight) {
    edges.weight = toFloats(*edgeWeight, "edge_weight");
    if (edges.weight.size() != edges.src.size())
      throwUserError("edge_weight has {} values for {} edges; give one per edge_index column", edges.weight.size(),
                     edges.src.size());
  }
  graph::BuildOptions options;
  options.selfLoops = parseSelfLoops(selfLoops);
  options.removeDuplicates = dedupe;
  options.symmetrize = symmetrize;
  options.index = parseIndex(index);
  options.loopWeight = loopWeight;
  return graph::Graph::fromEdges(edges, options);
}

/// The CSR by destination as numpy arrays: offsets (num_nodes + 1), the
/// source of each stored edge, and its id (its edge_index column, or an id
/// past the input's for an edge cleaning added).
nb::dict csrArrays(const graph::Csr &csr) {
  nb::dict out;
  csr.visit([&](const auto &a) {
    out["offsets"] = numpyVector(std::vector<int64_t>(a.offsets.begin(), a.offsets.end()));
    out["indices"] = numpyVector(std::vector<int64_t>(a.indices.begin(), a.indices.end()));
    out["edge_ids"] = numpyVector(std::vector<int64_t>(a.edgeIds.begin(), a.edgeIds.end()));
  });
  return out;
}

} // namespace

void registerGraph(nb::module_ &m) {
  nb::class_<graph::Graph>(m, "Graph", nb::is_weak_referenceable(),
                           "A graph built once from an edge_index and reused by every layer call: CSR by "
                           "destination, each stored edge keeping its edge_index column as its id.")
      .def(
          "__init__",
          [](graph::Graph *self, const AnyArray &edgeIndex, std::optional<int64_t> numNodes,
             std::optional<AnyArray> edgeWeight, const std::string &selfLoops, bool dedupe, bool symmetrize,
             const std::string &index, float loopWeight) {
            new (self) graph::Graph(
                fromEdgeIndex(edgeIndex, numNodes, edgeWeight, selfLoops, dedupe, symmetrize, index, loopWeight));
          },
          nb::arg("edge_index"), nb::arg("num_nodes") = nb::none(), nb::arg("edge_weight") = nb::none(),
          nb::arg("self_loops") = "keep", nb::arg("dedupe") = false, nb::arg("symmetrize") = false,
          nb::arg("index") = "auto", nb::arg("loop_weight") = 1.0f,
          "edge_index: [2, E] int64 or int32 (numpy, or any CPU array with DLPack); num_nodes: default max id + 1; "
          "edge_weight: [E] floats; self_loops: 'keep', 'remove', 'add', 'replace' or 'add_remaining'; dedupe: keep one edge per (source, "
          "destination); symmetrize: add the reverse of every edge that lacks one; index: 'auto', 'int32' or 'int64' (the "
          "CSR's index type; 'int32' is refused for a graph that does not fit); loop_weight: what a loop the build "
          "adds weighs where no own loop gives it a weight (PyG's fill_value; other than 1, an unweighted graph "
          "becomes weighted, its edges weighing 1).")
      .def_prop_ro("num_nodes", &graph::Graph::numNodes)
      .def_prop_ro("num_edges", &graph::Graph::numEdges, "stored edges, after cleaning")
      .def_prop_ro("num_input_edges", &graph::Graph::numInputEdges,
                   "edge_index's columns; ids at or above it were added by cleaning")
      .def_prop_ro("index_type", [](const graph::Graph &g) { return std::string(graph::indexTypeName(g.indexType())); })
      .def_prop_ro("has_weights", &graph::Graph::hasWeights)
      .def_prop_ro("max_in_degree", [](const graph::Graph &g) { return g.stats().in.max; })
      .def_prop_ro("mean_in_degree", [](const graph::Graph &g) { return g.stats().in.mean; })
      .def("incoming", [](const graph::Graph &g) { return csrArrays(g.incoming()); },
           "the CSR by destination: dict of offsets, indices (sources) and edge_ids")
      .def("__repr__", [](const graph::Graph &g) {
        return fmt::format("gnnjit.Graph({} nodes, {} edges, {} indices{})", g.numNodes(), g.numEdges(),
                           graph::indexTypeName(g.indexType()), g.hasWeights() ? ", weighted" : "");
      });
}

} // namespace gnnjit::python
