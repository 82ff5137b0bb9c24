// The preflight of `gnnjit run`: before anything tensor-sized is allocated,
// the host and device memory the whole run needs is estimated (graph arrays,
// inputs, outputs, gradients, scratch, and the fp64 reference when it runs)
// and a run that does not fit is refused at once, naming the largest items,
// the total and what the machine has.
#pragma once

#include "autotune/Rule.h"
#include "exec/LayerRunner.h"
#include "graph/Graph.h"
#include "lower/Pipeline.h"
#include "support/MemoryEstimate.h"

namespace gnnjit::cli {

struct RunShape {
  bool onGpu = false;
  bool backward = false;
  bool reference = false; ///< the fp64 reference runs (the CPU backend, or --check)
  autotune::RuleOptions rule; ///< what the tuning rule is told
};

struct RunMemory {
  MemoryEstimate host, device;
};

/// What the run will allocate beyond the graph it has already built; on the
/// GPU, for a runner of `programs`.
RunMemory estimateRunMemory(const lower::LoweredLayer &lowered, const graph::Graph &graph, const RunShape &shape,
                            const exec::LayerPrograms &programs);

/// Throws a UserError when `memory` does not fit this machine (host memory
/// available now; with a GPU, its free memory).
void requireRunFits(const RunMemory &memory, const RunShape &shape);

} // namespace gnnjit::cli
