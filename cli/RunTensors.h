// The tensors `gnnjit run` binds, and where their values come from: random
// from the seed (exec/RandomInputs.h: the same values on the host and the
// device) or files given with --inputs (cli/TensorFiles.h). On the GPU they
// are made on the device directly, streamed from files in blocks, so a GPU
// run holds no tensor-sized host copy unless the fp64 check needs one.
#pragma once

#include "exec/HostTransfer.h"
#include "graph/Graph.h"
#include "lower/Pipeline.h"
#include "ref/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gnnjit::cli {

/// One tensor a run binds: a layer input, or an output gradient d_<output>.
struct BoundTensor {
  std::string name;
  int64_t rows = 0, cols = 0;
  uint64_t stream = 0;         ///< random stream: inputs 1.., output gradients 1000..
  bool outputGradient = false; ///< bound only for the backward pass
};

/// The layer's inputs in declaration order, then (with `backward`) one
/// gradient per output.
std::vector<BoundTensor> boundTensors(const lower::LoweredLayer &lowered, const graph::Graph &graph, bool backward);

struct TensorSource {
  uint64_t seed = 0;
  std::string dir; ///< empty: random
  bool fromFiles() const { return !dir.empty(); }
};

/// The tensors as fp64 host tensors (the reference's inputs).
ref::TensorMap hostTensors(const std::vector<BoundTensor> &bound, const TensorSource &source);

/// The tensors made on the device into `owned`: random on the device, or
/// read from files block by block.
void makeDeviceTensors(const std::vector<BoundTensor> &bound, const TensorSource &source, exec::OwnedTensors &owned);

/// The same from host tensors already made (uploaded block by block).
void uploadTensors(const std::vector<BoundTensor> &bound, const ref::TensorMap &host, exec::OwnedTensors &owned);

/// Writes a device tensor as DIR/NAME.json and .bin, block by block.
void writeDeviceTensorFile(const std::string &dir, const std::string &name, const exec::DeviceTensor &t);

} // namespace gnnjit::cli
