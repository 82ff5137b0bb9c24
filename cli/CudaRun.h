// The GPU side of `gnnjit run`: the layer lowered, its kernels generated,
// compiled and run on the device over inputs that live on the device, timed
// with CUDA events; or, on a machine without a GPU, the kernels compiled
// only (NVRTC needs no GPU), so a run there still exercises the compiler.
#pragma once

#include "cli/RunTensors.h"
#include "autotune/Rule.h"
#include "exec/DeviceGraph.h"
#include "exec/LayerRunner.h"
#include "graph/Graph.h"
#include "lower/Stages.h"

#include <memory>
#include <optional>
#include <string>

namespace gnnjit::cli {

/// What a GPU run reports beyond its results.
struct GpuStats {
  double compileMs = 0; ///< generating, compiling (or loading from the cache) and loading every kernel
  int modules = 0, compiled = 0, cacheHits = 0; ///< cacheHits: modules found compiled (memory or disk)
  double forwardMs = 0, backwardMs = 0;         ///< medians
  size_t graphBytes = 0; ///< the graph's arrays on the device (CSR, transpose, degrees, cuSPARSE values)
  size_t peakBytes = 0;  ///< most device memory gnnjit held at once, graph and inputs included
  size_t inputBytes = 0; ///< the bound tensors
  std::string forwardPlan, backwardPlan; ///< Program::describe()
  int tunedStages = 0;       ///< stages planned with a tuning record's config
  double tuningRecordsMs = 0; ///< what finding them took (records read, graph fingerprinted, configs planned)
  double tuneSeconds = -1;    ///< run --tune: how long tuning took first (-1: nothing was tuned)
  std::string recordsNote;   ///< why records were not used, or a warning about the file, or empty
};

struct CudaRunOptions {
  exec::LayerPrograms programs; ///< what runs (the tuning records' configs, or the rule's)
  int reps = 10; ///< timed runs after one warm-up; the median is reported
  uint64_t seed = 0; ///< what attention dropout draws from (the run's --seed)
};

/// One run on the GPU. The bound tensors are made once (`inputs`) and serve
/// both passes; outputs and gradients stay on the device, owned by the runner,
/// for the caller to checksum, compare or dump.
class CudaRun {
public:
  CudaRun(const lower::LoweredLayer &lowered, const graph::Graph &graph, const CudaRunOptions &options);
  ~CudaRun();

  /// Generates, compiles and loads the kernels of the passes to run.
  void prepare(bool backward);
  /// Where the caller makes the bound tensors (all of them, both passes').
  exec::OwnedTensors &inputs() { return inputs_; }
  /// Runs forward (and backward), timing the median of options.reps.
  void run(bool backward);

  const exec::DeviceTensors &outputs() const { return *outputs_; }
  const exec::DeviceTensors &gradients() const { return *gradients_; }

  const GpuStats &stats() const { return stats_; }

private:
  /// The bound tensors one pass reads.
  exec::DeviceTensors passInputs(bool backward) const;

  const lower::LoweredLayer &lowered_;
  CudaRunOptions options_;
  exec::DeviceGraph graph_;
  std::unique_ptr<exec::LayerRunner> runner_;
  exec::OwnedTensors inputs_;
  const exec::DeviceTensors *outputs_ = nullptr, *gradients_ = nullptr;
  GpuStats stats_;
};

struct CompileOnlyResult {
  int modules = 0, compiled = 0; ///< compiled now by NVRTC; the rest came from the kernel cache
  double ms = 0;
  std::string refused; ///< why no kernels could be generated (a family not generated yet), else empty
};

/// Plans (by the rule) and compiles the kernels of forward (and backward)
/// without a GPU.
CompileOnlyResult compileOnly(const lower::LoweredLayer &lowered, const graph::Graph &graph, bool backward,
                              const autotune::RuleOptions &rule);

} // namespace gnnjit::cli
