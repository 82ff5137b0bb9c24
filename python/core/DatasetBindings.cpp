// gnnjit.load_dataset: a dataset folder of ../shared/datasets (or any GRAPH
// spec gnnjit's commands take) as arrays: PyG's edge_index, features, labels
// and the split, read by the same loaders as the C++ side.
#include "python/core/Arrays.h"
#include "python/core/Bindings.h"

#include "graph/GraphSource.h"

#include <nanobind/stl/string.h>

#include <cstring>

namespace nb = nanobind;

namespace gnnjit::python {

namespace {

nb::object edgeIndexArray(const graph::EdgeList &edges) {
  std::vector<int64_t> both(edges.src);
  both.insert(both.end(), edges.dst.begin(), edges.dst.end());
  return numpyMatrix(both, 2, edges.numEdges());
}

} // namespace

void registerDatasets(nb::module_ &m) {
  m.def(
      "load_dataset",
      [](const std::string &spec) {
        graph::Dataset d;
        {
          nb::gil_scoped_release release;
          d = graph::loadGraphSource(spec);
        }
        nb::dict out;
        out["name"] = d.name;
        out["num_nodes"] = d.edges.numNodes;
        out["edge_index"] = edgeIndexArray(d.edges);
        if (d.edges.hasWeights())
          out["edge_weight"] = numpyVector(d.edges.weight);
        if (d.features)
          out["features"] = numpyMatrix(d.features->values, d.features->rows, d.features->cols);
        if (!d.labels.empty())
          out["labels"] = numpyVector(d.labels);
        for (const auto &[name, ids] : {std::pair{"train", &d.train}, {"val", &d.val}, {"test", &d.test}})
          if (!ids->empty())
            out[name] = numpyVector(*ids);
        return out;
      },
      nb::arg("spec"),
      "A dataset as arrays: a name found in $GNNJIT_DATA, ./data or ../shared/datasets, a dataset folder, a graph "
      "file or a generator spec (as gnnjit's commands take). A dict of name, num_nodes, edge_index ([2, E] int64, "
      "row 0 sources), and where the dataset has them edge_weight, features (float32), labels and the "
      "train/val/test node ids (int64).");
}

} // namespace gnnjit::python
