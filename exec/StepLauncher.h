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

/// Runs every step of `program` on `stream`. `kernels[m][e]` is entry e of
/// module m; `inputs` were checked against the layer by the caller.
void launchProgram(const Program &program, const std::vector<std::vector<runtime::Kernel>> &kernels, DeviceGraph &graph,
                   const DeviceTensors &inputs, ProgramBuffers &buffers, cudaStream_t stream, const std::string &layer);

} // namespace gnnjit::exec
