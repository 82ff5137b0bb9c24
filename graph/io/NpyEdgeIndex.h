// A graph's edges as NumPy .npy files, so a Python benchmark (PyG) can run on
// exactly the graph gnnjit runs on: np.load(path) gives PyG's edge_index.
#pragma once

#include <filesystem>

namespace gnnjit::graph {

class Graph;

/// Writes the edges as a .npy (format version 1.0) array of dtype '<i8',
/// C order, shape (2, numEdges): row 0 the sources j, row 1 the destinations
/// i, in the order of graph.incoming() (sorted by destination, then by
/// source, as PyG's edge_index with flow source_to_target). Both index types
/// are written as int64. The file is written to a temp file beside `path`
/// and renamed over it, so readers never see a partial file. Throws
/// UserError naming `path` on any I/O failure.
void writeEdgeIndexNpy(const Graph &graph, const std::filesystem::path &path);

/// Writes the edge weights as a .npy (version 1.0) array of dtype '<f4',
/// shape (numEdges,), in the same order as writeEdgeIndexNpy (column k of the
/// edge index has weight k). Atomic like it. Throws UserError when the graph
/// is unweighted, or naming `path` on any I/O failure.
void writeEdgeWeightsNpy(const Graph &graph, const std::filesystem::path &path);

} // namespace gnnjit::graph
