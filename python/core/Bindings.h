// The parts of gnnjit's Python extension (gnnjit._core), each registering
// its classes and functions on the module. The extension links no Python
// array library beyond nanobind's ndarray (numpy, or anything with
// DLPack: torch tensors too) and never torch itself: the torch operators are
// Python, on top of this.
#pragma once

#include "graph/Graph.h"

#include <nanobind/nanobind.h>

#include <string>

namespace gnnjit::python {

/// The self_loops and index arguments of graph builds ('keep', 'remove',
/// 'add', 'replace', 'add_remaining'; 'auto', 'int32', 'int64'); a
/// UserError listing them otherwise.
graph::SelfLoops parseSelfLoops(const std::string &text);
graph::IndexChoice parseIndex(const std::string &text);

/// Exceptions: UserError -> gnnjit.Error (a ValueError), InternalError and
/// LibraryError -> RuntimeError naming them.
void registerErrors(nanobind::module_ &m);
/// gnnjit.Graph: a graph built once from an edge_index.
void registerGraph(nanobind::module_ &m);
/// gnnjit.Layer: library layers, their inputs and outputs; export.
void registerLayers(nanobind::module_ &m);
/// The CPU reference executor (float64) on arrays.
void registerReference(nanobind::module_ &m);
/// gnnjit.load_dataset: datasets and generated graphs as arrays.
void registerDatasets(nanobind::module_ &m);
/// The GPU path for gnnjit.ops: device graphs, layer runners on the
/// caller's memory and stream, the device allocator.
void registerCuda(nanobind::module_ &m);
/// gnnjit.dsl: the layer builder, expressions and operators.
void registerDsl(nanobind::module_ &m);

} // namespace gnnjit::python
