// Whole-tensor operations on the device (codegen/device/tensor_ops.cuh): a
// checksum that needs no host copy of the tensor, and the affine shift that
// puts random inputs into (-1, 1]. Compiled once per process through the
// kernel cache.
#pragma once

#include "exec/LayerRunner.h"
#include "ref/Tensor.h"

#include <cstdint>

namespace gnnjit::exec {

/// What `gnnjit run` reports of a tensor: the sum, sum of squares and
/// largest magnitude of its finite values, and how many are not finite.
struct Checksum {
  double sum = 0, sumSq = 0, maxAbs = 0;
  int64_t nonFinite = 0;
};

/// Of a host tensor, summed in order.
Checksum checksum(const ref::Tensor &t);

/// Of a device tensor, summed on the device in a fixed order (the same on
/// every run; it may differ from the host's order in the last bits).
Checksum checksum(const DeviceTensor &t, cudaStream_t stream = nullptr);

/// x = x * scale + shift over the rows x cols floats of a contiguous tensor.
void affineInPlace(const DeviceTensor &t, float scale, float shift, cudaStream_t stream = nullptr);

} // namespace gnnjit::exec
