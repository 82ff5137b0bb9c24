// Runs a lowered layer on a graph on the GPU: plans each pass (Program),
// generates and compiles its kernels once (through the kernel cache), and
// launches them on the caller's stream. Inputs and outputs are float rows on
// the device; the runner owns the outputs and scratch buffers and reuses them
// from call to call.
#pragma once

#include "exec/DeviceGraph.h"
#include "exec/Program.h"
#include "lower/KernelPlan.h"
#include "runtime/KernelCache.h"

#include <map>
#include <memory>
#include <string>

namespace gnnjit::exec {

/// rows x cols floats, row r at data + r * ld (ld >= cols).
struct DeviceTensor {
  float *data = nullptr;
  int64_t rows = 0, cols = 0, ld = 0;
};
using DeviceTensors = std::map<std::string, DeviceTensor, std::less<>>;

struct RunnerOptions {
  Variant variant = Variant::Auto;
  runtime::KernelCache *cache = nullptr; ///< null: a process-wide cache in the default folder
  std::string arch;                      ///< empty: the device's
  bool lineInfo = false;
  /// Forces the generated SpMM kernel's lanes per row and heavy-row
  /// threshold (0: the tuning rule's), for benchmarks and the tuner.
  int spmmGroup = 0;
  int64_t spmmHeavyThreshold = 0;
};

/// The program config the runner plans with on `graph`: index type,
/// weights, and the tuning rule fed with the graph's degree statistics.
/// `aligned`: inputs allow 16-byte vector loads.
ProgramConfig graphProgramConfig(const graph::Graph &graph, const RunnerOptions &options, bool aligned);

/// How the kernels of a pass were obtained (for reports).
struct CompileReport {
  int modules = 0;
  int compiled = 0, diskHits = 0, memoryHits = 0;
  double seconds = 0; ///< wall time of generating, compiling and loading
};

/// Compiles every kernel of `pass` for `graph` without a GPU (NVRTC only,
/// through the kernel cache), as the runner would; adds to `report`.
void compileProgram(const lower::LoweredLayer &lowered, const graph::Graph &graph, Pass pass,
                    const RunnerOptions &options, CompileReport &report);

class LayerRunner {
public:
  LayerRunner(const lower::LoweredLayer &lowered, DeviceGraph &graph, RunnerOptions options = {});
  ~LayerRunner();
  LayerRunner(const LayerRunner &) = delete;
  LayerRunner &operator=(const LayerRunner &) = delete;

  /// Every output of the layer. `inputs` binds each layer input by name:
  /// node inputs one row per node, edge inputs one row per edge id,
  /// parameters one row; a missing or misshapen binding is a UserError.
  /// The returned views stay valid until the next call on this runner.
  const DeviceTensors &forward(const DeviceTensors &inputs, cudaStream_t stream = nullptr);
  /// The gradient of every input (named as the input), given the inputs
  /// and "d_<output>" for each output.
  const DeviceTensors &backward(const DeviceTensors &inputs, cudaStream_t stream = nullptr);

  /// The program of a pass for inputs whose rows allow vector loads
  /// (aligned) or not; planned and compiled on first use.
  const Program &program(Pass pass, bool aligned = true);
  /// Generates, compiles and loads both passes now (so timing excludes it).
  void prepare(bool backward);
  const CompileReport &compileReport() const { return report_; }

private:
  struct Compiled;
  Compiled &compiled(Pass pass, bool aligned);
  const DeviceTensors &run(Pass pass, const DeviceTensors &inputs, cudaStream_t stream);

  lower::LoweredLayer lowered_;
  DeviceGraph &graph_;
  RunnerOptions options_;
  std::map<std::pair<Pass, bool>, std::unique_ptr<Compiled>> programs_;
  CompileReport report_;
};

} // namespace gnnjit::exec
