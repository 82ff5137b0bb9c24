// The random inputs `gnnjit run` makes: uniform in (-1, 1], from cuRAND's
// Philox4x32-10 (runtime/PhiloxUniform.h) mapped u -> 2u - 1 in float. The
// host and the device make the very same values from a seed, so a GPU run
// needs no host copy of its inputs, and `--backend cpu` and `--backend cuda`
// see identical inputs.
#pragma once

#include "exec/LayerRunner.h"
#include "ref/Tensor.h"

#include <cstdint>

namespace gnnjit::exec {

/// The seed of tensor number `stream` of a run seeded with `seed`.
uint64_t tensorSeed(uint64_t seed, uint64_t stream);

/// rows x cols values on the host (as doubles holding the floats).
ref::Tensor randomHostTensor(int64_t rows, int64_t cols, uint64_t seed);

/// The same values into a contiguous device tensor, on `stream`.
void fillRandom(const DeviceTensor &t, uint64_t seed, cudaStream_t stream = nullptr);

} // namespace gnnjit::exec
