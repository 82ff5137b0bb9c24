// What the CLI's GRAPH argument names: a generator spec, a file, a dataset
// folder, or a dataset name looked up on a search path.
#pragma once

#include "graph/io/Dataset.h"

#include <filesystem>
#include <string_view>
#include <vector>

namespace gnnjit::graph {

/// Where dataset names are looked up, in order: each entry of $GNNJIT_DATA
/// (':'-separated), then ./data, then ../shared/datasets.
std::vector<std::filesystem::path> datasetSearchPath();

/// Loads what `spec` names, trying in order:
///  1. a generator spec ("rmat:scale=20,ef=16", "grid:side=1024", ...);
///  2. an existing file (format from its name) or folder;
///  3. a folder of that name on datasetSearchPath().
/// A folder is a dataset folder when it holds graph.mtx; otherwise it must
/// hold exactly one graph file (as email-Eu-core does). Only the edges are
/// filled for generators and single files. Throws UserError saying what was
/// tried.
Dataset loadGraphSource(std::string_view spec);

} // namespace gnnjit::graph
