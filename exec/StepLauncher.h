// Launches the steps of a planned and compiled program: binds every kernel
// parameter (codegen::KernelParam) to the graph's device arrays, the caller's
// inputs or the runner's buffers, and sizes each grid by the launch rule the
// plan gave the kernel (lower/LaunchRule.h: export's plan.json states the same
// rules). Internal to the runner.
#pragma once

#include "exec/DeviceGraph.h"
#include "exec/LayerRunner.h"
#include "runtime/Module.h"

#include <map>
#include <string>
#include <vector>

namespace gnnjit::exec {

/// The buffers a program writes: scratch, targets (the runner's or the
/// caller's: contiguous rows), partial sums; and the saved values, shared
/// with the other pass.
struct ProgramBuffers {
  std::vector<runtime::DeviceBuffer<float>> scratch;
  DeviceTensors targets;
  runtime::DeviceBuffer<float> partials;        ///< grown on demand
  runtime::DeviceBuffer<float> sumPartials;     ///< an attention step's per-group sums over all edges, grown on demand
  runtime::DeviceBuffer<int64_t> partialArgs;   ///< arg positions of a reduction's segment partials, or its packed slots
  runtime::DeviceBuffer<int64_t> fixedPoint;    ///< an arg scatter's integer sums, grown on demand
  runtime::DeviceBuffer<double> fixedPointScale; ///< their scale, computed on the device
  /// The saved buffers by name: memory the runner keeps across passes, or
  /// (SavedBuffer::aliasOf) the forward output holding the same values.
  std::map<std::string, void *, std::less<>> *saved = nullptr;
  /// The call's seed of attention dropout (the backward gets its forward's).
  uint64_t randomSeed = 0;
};

/// Runs every step of `program` on `stream`. `kernels[m][e]` is entry e of
/// module m; `inputs` were checked against the layer by the caller.
void launchProgram(const codegen::Program &program, const std::vector<std::vector<runtime::Kernel>> &kernels, DeviceGraph &graph,
                   const DeviceTensors &inputs, ProgramBuffers &buffers, cudaStream_t stream, const std::string &layer);

/// The heavy-row segments the steps of `plan` launch over (those whose
/// tiling splits rows above a threshold), as DeviceGraph::segments keys.
std::vector<SegmentKey> segmentKeysOf(const lower::PassPlan &plan);

/// The power-of-two scale an arg scatter turns its contributions into
/// integers with: sums of at most `maxTerms` of magnitude <= `largest` stay
/// below 2^61. The kernels compute it on the device by the same double
/// arithmetic (argScatterScale in gnnjit/argscatter.cuh); this is its
/// statement on the host, which the tests hold to its bounds.
double fixedPointScale(float largest, int64_t maxTerms);

/// Throws a UserError, before anything is allocated, when a kernel of
/// `plan` on a graph with `stats` would need a grid beyond CUDA's limits (2^31 - 1
/// blocks across, 65535 down): rows too wide for the kernels' tiles.
void checkLaunchable(const lower::PassPlan &plan, const graph::DegreeStats &stats);

} // namespace gnnjit::exec
