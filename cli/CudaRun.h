// The GPU side of `gnnjit run`: the layer lowered, its kernels generated,
// compiled and run on the device with the inputs the command made, timed
// with CUDA events; or, on a machine without a GPU, the kernels compiled
// only (NVRTC needs no GPU), so a run there still exercises the compiler.
#pragma once

#include "exec/Program.h"
#include "graph/Graph.h"
#include "lower/KernelPlan.h"
#include "ref/Tensor.h"

#include <optional>
#include <string>

namespace gnnjit::cli {

struct CudaRunOptions {
  exec::Variant variant = exec::Variant::Auto;
  int reps = 10; ///< timed runs after one warm-up; the median is reported
};

struct CudaRunResult {
  ref::TensorMap outputs, gradients;
  double compileMs = 0; ///< generating, compiling (or loading from the cache) and loading every kernel
  int modules = 0, compiled = 0, cacheHits = 0; ///< cacheHits: modules found compiled (memory or disk)
  double forwardMs = 0, backwardMs = 0;         ///< medians
  size_t graphBytes = 0; ///< the graph's arrays on the device (CSR, transpose, degrees, cuSPARSE values)
  size_t peakBytes = 0;  ///< most device memory gnnjit held at once, graph and inputs included
  size_t inputBytes = 0; ///< the inputs (and output gradients) uploaded
  std::string forwardPlan, backwardPlan; ///< Program::describe()
};

/// Runs forward (and backward when `outputGradients` is given) on the GPU.
CudaRunResult runOnCuda(const lower::LoweredLayer &lowered, const graph::Graph &graph, const ref::TensorMap &inputs,
                        const ref::TensorMap *outputGradients, const CudaRunOptions &options);

struct CompileOnlyResult {
  int modules = 0, compiled = 0; ///< compiled now by NVRTC; the rest came from the kernel cache
  double ms = 0;
  std::string refused; ///< why no kernels could be generated (a family not generated yet), else empty
};

/// Plans and compiles the kernels of forward (and backward) without a GPU.
CompileOnlyResult compileOnly(const lower::LoweredLayer &lowered, const graph::Graph &graph, bool backward,
                              exec::Variant variant);

} // namespace gnnjit::cli
