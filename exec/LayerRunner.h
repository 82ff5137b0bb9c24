// Runs a lowered layer on a graph on the GPU: plans each pass with the
// configs it is handed (or the tuning rule's), generates and compiles its
// kernels once (through the kernel cache), and launches them on the
// caller's stream. Inputs and outputs are float rows on the device; the
// runner owns the outputs, the scratch buffers and the values the forward
// saves for the backward, and reuses them from call to call.
#pragma once

#include "exec/DeviceGraph.h"
#include "exec/Program.h"
#include "exec/Tuning.h"
#include "lower/Stages.h"
#include "runtime/KernelCache.h"

#include <map>
#include <memory>
#include <optional>
#include <string>

namespace gnnjit::exec {

/// rows x cols floats, row r at data + r * ld (ld >= cols).
struct DeviceTensor {
  float *data = nullptr;
  int64_t rows = 0, cols = 0, ld = 0;
};
using DeviceTensors = std::map<std::string, DeviceTensor, std::less<>>;

struct RunnerOptions {
  runtime::KernelCache *cache = nullptr; ///< null: a process-wide cache in the default folder
  std::string arch;                      ///< empty: the device's
  bool lineInfo = false;
  /// What the tuning rule is told when it makes a pass's config.
  RuleOptions rule;
  /// The configs of the passes instead of the rule's (a benchmark's, the
  /// autotuner's). For inputs whose rows do not allow 16-byte loads the
  /// runner gathers one float at a time (unalignedConfig).
  std::optional<lower::PassConfig> forward, backward;
};

/// The config the runner plans `pass` with on `graph`.
lower::PassConfig passConfig(const lower::LoweredLayer &lowered, Pass pass, const graph::Graph &graph,
                             const RunnerOptions &options, bool aligned);

/// How the kernels of a pass were obtained (for reports).
struct CompileReport {
  int modules = 0;
  int compiled = 0, diskHits = 0, memoryHits = 0;
  double seconds = 0; ///< wall time of generating, compiling and loading
};

/// The kernel cache and the NVRTC options a runner with `options` uses.
runtime::KernelCache &kernelCacheOf(const RunnerOptions &options);
runtime::CompileOptions compileOptionsOf(const RunnerOptions &options);

/// The kernel modules a runner with `options` loads for `pass` on `graph`
/// (inputs whose rows allow vector loads), as NVRTC sources.
std::vector<runtime::Source> programSources(const lower::LoweredLayer &lowered, const graph::Graph &graph, Pass pass,
                                            const RunnerOptions &options);

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
  /// and "d_<output>" for each output. It reads what the last forward
  /// saved, which for an attention layer whose output is its aggregate as
  /// is (GAT, GATv2, the Transformer with concatenated heads) is that
  /// output itself: leave the forward's outputs unchanged until then.
  const DeviceTensors &backward(const DeviceTensors &inputs, cudaStream_t stream = nullptr);

  /// The program of a pass for inputs whose rows allow vector loads
  /// (aligned) or not; planned and compiled on first use.
  const Program &program(Pass pass, bool aligned = true);
  /// Generates, compiles and loads both passes now (so timing excludes it).
  void prepare(bool backward);
  const CompileReport &compileReport() const { return report_; }
  /// A value the forward saved for the backward (e.g. "args0"), or null:
  /// for tests and inspection.
  const runtime::DeviceMemory *saved(std::string_view name) const;

private:
  struct Compiled;
  Compiled &compiled(Pass pass, bool aligned);
  const DeviceTensors &run(Pass pass, const DeviceTensors &inputs, cudaStream_t stream);

  lower::LoweredLayer lowered_;
  DeviceGraph &graph_;
  RunnerOptions options_;
  std::map<std::pair<Pass, bool>, std::unique_ptr<Compiled>> programs_;
  /// Values the forward saves for the backward, by name, shared by both
  /// passes; and where every saved value is, these or forward outputs.
  std::map<std::string, runtime::DeviceMemory, std::less<>> saved_;
  std::map<std::string, void *, std::less<>> savedAt_;
  bool forwardRan_ = false; ///< the saved values hold something
  CompileReport report_;
};

} // namespace gnnjit::exec
