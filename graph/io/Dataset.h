// A dataset folder as in ../shared/datasets: graph.mtx, and where present
// features.mtx, labels.txt, train.txt, val.txt, test.txt.
#pragma once

#include "graph/EdgeList.h"
#include "graph/io/DenseMatrix.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace gnnjit::graph {

struct Dataset {
  std::string name;
  EdgeList edges;
  std::optional<DenseMatrix> features; ///< one row per node
  std::vector<int64_t> labels;         ///< empty, or one per node
  std::vector<int64_t> train, val, test;
};

/// Whether `folder` looks like a dataset folder (it holds graph.mtx or
/// graph.mtx.gz).
bool isDatasetFolder(const std::filesystem::path &folder);

/// Loads a dataset folder and checks that its parts agree: one feature row
/// and one label per node, split ids in range. The name is the folder name.
Dataset loadDatasetFolder(const std::filesystem::path &folder);

} // namespace gnnjit::graph
