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
#include "lower/KernelPlan.h"

namespace gnnjit::codegen {

/// Entry "<base>": one thread per (row, element of the widest output);
/// every target of the step read from inputs and scratch buffers.
GeneratedModule generateNodeKernel(const lower::PassPlan &plan, const lower::NodeOutputsStep &step);

/// Entries "<base>_partial" (one block per partial sum) and "<base>_finish"
/// (one thread per element, adding the partials in block order).
GeneratedModule generateNodeSumKernel(const lower::PassPlan &plan, const lower::NodeSumStep &step);

} // namespace gnnjit::codegen
