// Launches the steps of a planned and compiled program: binds every kernel
// parameter (codegen::KernelParam) to the graph's device arrays, the caller's
// inputs or the runner's buffers, and sizes each grid by the rules export's
// plan.json states. Internal to the runner.
#pragma once

#include "exec/DeviceGraph.h"
#include "exec/LayerRunner.h"
#include "exec/Program.h"
#include "runtime/Module.h"

#include <map>
#include <string>
#include <vector>

namespace gnnjit::exec {

/// The buffers a program writes: aggregate scratch, targets, partial sums.
struct ProgramBuffers {
  std::vector<runtime::DeviceBuffer<float>> aggregates;
  std::map<std::string, runtime::DeviceBuffer<float>, std::less<>> targets;
  runtime::DeviceBuffer<float> partials; ///< grown on demand
};

/// Which CSR an aggregation stage walks.
Direction directionOf(const lower::AggregationStage &stage);

/// The rows of partial sums a node-sum step reduces `rows` nodes into.
int64_t nodeSumPartials(int64_t rows);

/// Throws a UserError, before anything is allocated, when a step of
/// `program` on `graph` would need a grid beyond CUDA's limits (2^31 - 1
/// blocks across, 65535 down): rows too wide for the kernels' tiles.
void checkLaunchable(const Program &program, const graph::Graph &graph, const std::string &layer);

/// Runs every step of `program` on `stream`. `kernels[m][e]` is entry e of
/// module m; `inputs` were checked against the layer by the caller.
void launchProgram(const Program &program, const std::vector<std::vector<runtime::Kernel>> &kernels, DeviceGraph &graph,
                   const DeviceTensors &inputs, ProgramBuffers &buffers, cudaStream_t stream, const std::string &layer);

} // namespace gnnjit::exec
