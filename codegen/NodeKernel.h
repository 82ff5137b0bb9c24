// Kernels over nodes, for what the SpMM kernels do not fuse:
// - generateNodeKernel: per node (or once, for global values) outputs
//   computed element-wise from inputs and aggregates already in buffers;
//   one thread per (node, element).
// - generateNodeSumKernel: a sum over all nodes of a per-node value (e.g.
//   the gradient of a scalar parameter), in two passes: per-block partial
//   sums, then one thread per element adds the partials in block order, so
//   the result is the same on every run (no float atomics).
#pragma once

#include "codegen/KernelParams.h"
#include "dsl/Expr.h"

#include <map>
#include <string>
#include <vector>

namespace gnnjit::codegen {

struct NodeOutput {
  std::string name;
  dsl::ExprPtr value; ///< per-node (any node level) or, for a global kernel, Global
};

struct NodeKernelSpec {
  std::string layer, label;
  std::vector<NodeOutput> outputs;
  /// Aggregates the outputs read, by buffer index.
  std::map<const dsl::ExprNode *, int> aggregateBuffers;
  bool global = false; ///< one row: outputs are Global values
  int blockThreads = 256;
};

/// Entry "<base>": grid over num_rows * (widest output) threads.
GeneratedModule generateNodeKernel(const NodeKernelSpec &spec);

struct NodeSumSpec {
  std::string layer, label;
  dsl::ExprPtr aggregate; ///< aggregate[sum, all_nodes] of a per-node message
  int aggregateIndex = 0; ///< where the [1, size] result goes
  std::map<const dsl::ExprNode *, int> aggregateBuffers;
  int blockThreads = 256;
};

/// Entries "<base>_partial" (grid: num_partials blocks) and "<base>_finish"
/// (one thread per element).
GeneratedModule generateNodeSumKernel(const NodeSumSpec &spec);

} // namespace gnnjit::codegen
