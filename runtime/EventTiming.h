// Timing GPU work with CUDA events, as the benchmarks and `run` report it.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>

namespace gnnjit::runtime {

/// Runs `fn` `warmup` times, then `reps` times (at least once) between two
/// events recorded on `stream`, and returns the median in milliseconds.
double medianMs(const std::function<void()> &fn, int warmup, int reps, cudaStream_t stream = nullptr);

} // namespace gnnjit::runtime
