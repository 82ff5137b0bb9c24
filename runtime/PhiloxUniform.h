// Counter-based random numbers from cuRAND's Philox4x32-10 generator, in its
// legacy ordering: a seed gives the same sequence on the host and on any GPU,
// so `gnnjit run` can make its random inputs on the device (no tensor-sized
// host buffer) and the CPU backend gets the very same values.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace gnnjit::runtime {

/// Values `offset` .. `offset + count` of the sequence of `seed`: uniform
/// floats in (0, 1] into host memory; no GPU needed. (Generating a long
/// sequence in blocks gives the same values as in one go.)
void philoxUniformHost(float *out, size_t count, uint64_t seed, uint64_t offset = 0);

/// The same `count` floats into device memory, generated on `stream`.
void philoxUniformDevice(float *deviceOut, size_t count, uint64_t seed, cudaStream_t stream);

} // namespace gnnjit::runtime
