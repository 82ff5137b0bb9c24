// Whole-tensor operations on the device (codegen/device/tensor_ops.cuh): a
// checksum and a comparison of two tensors that need no host copy of them,
// and the affine shift that puts random inputs into (-1, 1]. Compiled once
// per process through the kernel cache.
#pragma once

#include "exec/HostTransfer.h"
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

/// How far `actual` is from `expected`, both on the device, scored as
/// exec::compare scores a device tensor against a host one (atolScale times
/// the largest finite |expected|), without moving either to the host: the
/// autotuner checks each candidate's results against the rule's this way.
Agreement compare(const DeviceTensor &expected, const DeviceTensor &actual, double atolScale = 1e-2,
                  cudaStream_t stream = nullptr);

/// x = x * scale + shift over the rows x cols floats of a contiguous tensor.
void affineInPlace(const DeviceTensor &t, float scale, float shift, cudaStream_t stream = nullptr);

} // namespace gnnjit::exec
