#include "cli/RunPreflight.h"

#include "exec/HostTransfer.h"
#include "exec/RunnerMemory.h"
#include "graph/GraphMemory.h"
#include "ref/MemoryEstimate.h"
#include "runtime/Device.h"

namespace gnnjit::cli {

namespace {

constexpr const char *kAdvice = "Use a smaller graph or --dim, or a machine with more memory.";

/// The fp64 reference: its inputs, then whichever of its passes holds more
/// (the backward runs while the forward's outputs are kept).
MemoryEstimate referenceMemory(const lower::LoweredLayer &lowered, const graph::Graph &graph, bool backward) {
  MemoryEstimate m = ref::tensorMemory(lowered.layer.inputs(), graph, "input");
  const MemoryEstimate forward = ref::forwardMemory(lowered.layer, graph);
  if (!backward) {
    m.add(forward);
    return m;
  }
  m.add(ref::tensorMemory(lowered.backward.plan.outputGradients, graph, "output gradient"));
  MemoryEstimate afterForward;
  for (const MemoryItem &item : forward.items())
    if (item.what.starts_with("output '"))
      afterForward.add(item.what, item.bytes);
  afterForward.add(ref::backwardMemory(lowered.layer, lowered.backward.plan, graph));
  m.add(afterForward.total() > forward.total() ? afterForward : forward);
  return m;
}

} // namespace

RunMemory estimateRunMemory(const lower::LoweredLayer &lowered, const graph::Graph &graph, const RunShape &shape,
                            const exec::LayerPrograms &programs) {
  RunMemory m;
  if (shape.reference)
    m.host.add(referenceMemory(lowered, graph, shape.backward));
  if (shape.onGpu) {
    // Uploads and downloads go through one bounded block at a time.
    m.host.add("transfer blocks", exec::kTransferBlockBytes);
    m.device.add(exec::deviceTensorMemory(lowered.layer.inputs(), graph, "input"));
    if (shape.backward)
      m.device.add(exec::deviceTensorMemory(lowered.backward.plan.outputGradients, graph, "output gradient"));
    m.device.add(exec::runnerMemory(programs, graph, shape.backward));
    if (shape.backward) // the device graph's transpose is built on the host first
      m.host.add(graph::transposeMemory(graph));
  }
  return m;
}

void requireRunFits(const RunMemory &memory, const RunShape &shape) {
  requireHostMemory(memory.host, "This run", kAdvice);
  if (!shape.onGpu)
    return;
  const runtime::DeviceMemoryInfo device = runtime::deviceMemoryInfo();
  requireFits(memory.device, device.freeBytes, "GPU memory", "free on the device, by cudaMemGetInfo", "This run",
              kAdvice);
}

} // namespace gnnjit::cli
