// Runs a lowered layer on a graph on the GPU: it is handed each pass's
// program (planned and emitted from the configs a tuning policy chose:
// autotune/PlanLayer.h), compiles and loads its kernels once (through the
// kernel cache), binds buffers and launches what the plan says on the
// caller's stream; it decides no config itself. Inputs whose rows do not
// allow 16-byte loads run the same configs' unaligned variant
// (lower::unalignedConfig), planned on first use. Inputs and outputs are
// float rows on the device; the runner owns the outputs, the scratch
// buffers and the values the forward saves for the backward, and reuses
// them from call to call.
#pragma once

#include "codegen/Program.h"
#include "exec/DeviceGraph.h"
#include "lower/Stages.h"
#include "runtime/KernelCache.h"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace gnnjit::exec {

/// rows x cols floats, row r at data + r * ld (ld >= cols).
struct DeviceTensor {
  float *data = nullptr;
  int64_t rows = 0, cols = 0, ld = 0;
};
using DeviceTensors = std::map<std::string, DeviceTensor, std::less<>>;

using lower::Direction;
using lower::Pass;
using lower::passName;

/// The programs a runner launches: the forward's, and the backward's
/// (null for a runner of the forward alone); and, for inputs whose rows do
/// not allow 16-byte loads, the program of a pass the policy that chose
/// the configs would run then (unset: the given configs' unaligned variant,
/// lower::unalignedConfig). Asked on first use only.
/// Kernels loaded for programs, by program, shared by the runners of one
/// layer on many graphs (on one device): a runner on a new graph whose
/// configs were seen before loads nothing (no source is emitted or hashed
/// again). Thread-safe.
class LoadedKernels {
public:
  using Table = std::vector<std::vector<runtime::Kernel>>; ///< per module, per entry
  /// The kernels of `program`, loaded by `load` the first time.
  Table of(const codegen::ProgramPtr &program, const std::function<Table()> &load);

private:
  std::mutex mutex_;
  std::map<const codegen::Program *, std::pair<codegen::ProgramPtr, Table>> entries_;
};

struct LayerPrograms {
  codegen::ProgramPtr forward, backward;
  std::function<codegen::ProgramPtr(const lower::LoweredLayer &, Pass)> unaligned;
  std::shared_ptr<LoadedKernels> loaded; ///< null: each runner loads its own
};

struct RunnerOptions {
  runtime::KernelCache *cache = nullptr; ///< null: a process-wide cache in the default folder
  std::string arch;                      ///< empty: the device's
  bool lineInfo = false;
};

/// How the kernels of a pass were obtained (for reports).
struct CompileReport {
  int modules = 0;
  int compiled = 0, diskHits = 0, memoryHits = 0;
  double seconds = 0; ///< wall time of generating, compiling and loading
};

/// The kernel cache and the NVRTC options a runner with `options` uses.
runtime::KernelCache &kernelCacheOf(const RunnerOptions &options);
runtime::CompileOptions compileOptionsOf(const RunnerOptions &options);

/// The kernel modules of `program`, as NVRTC sources.
std::vector<runtime::Source> programSources(const codegen::Program &program);

/// Compiles every kernel of `program` without a GPU (NVRTC only, through
/// the kernel cache), as a runner with `options` would; adds to `report`.
void compileProgram(const codegen::Program &program, const RunnerOptions &options, CompileReport &report);

/// A value the forward pass saves for the backward: one row per node of
/// `width` elements, floats or CSR positions (the graph's index type); or,
/// when `aliasOf` names a forward output, that output's values (no memory
/// of its own: the backward reads the output).
struct SavedValue {
  std::string name;
  int64_t rows = 0, width = 0;
  size_t elementBytes = sizeof(float);
  bool positions = false;
  std::string aliasOf;
  size_t bytes() const { return static_cast<size_t>(rows * width) * elementBytes; }
};

/// Device memory given by the caller, `bytes` long.
struct DeviceBytes {
  void *data = nullptr;
  size_t bytes = 0;
};

/// Memory one call uses that the caller owns (a framework's tensors) instead
/// of the runner's: the pass's results by name (the forward's outputs, the
/// backward's input gradients; contiguous rows) and every saved value by
/// name (the forward writes them, the backward reads them; for a value that
/// aliases a forward output, the backward is given that output). Calls with
/// their own buffers are independent: any number of forwards may precede
/// the backwards that read their saved values.
struct CallBuffers {
  DeviceTensors results;
  std::map<std::string, DeviceBytes, std::less<>> saved;
};

class LayerRunner {
public:
  /// `programs` were planned for this layer and for graphs like `graph`
  /// (its index type and edge weights: PassPlan::config).
  LayerRunner(const lower::LoweredLayer &lowered, DeviceGraph &graph, LayerPrograms programs,
              RunnerOptions options = {});
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
  /// The same passes writing (and reading) the caller's memory: `call`'s
  /// results and saved values, as savedValues() lists them; returns
  /// call.results. The runner keeps only scratch between kernels.
  const DeviceTensors &forward(const DeviceTensors &inputs, CallBuffers &call, cudaStream_t stream = nullptr);
  const DeviceTensors &backward(const DeviceTensors &inputs, CallBuffers &call, cudaStream_t stream = nullptr);
  /// The bindings a pass takes, in order: the layer's inputs, then for the
  /// backward "d_<output>" of each output.
  size_t passInputCount(Pass pass) const;
  const dsl::InputDecl &passInput(Pass pass, size_t k) const;
  /// What the forward saves for the backward (planned and compiled on first
  /// use, for inputs whose rows allow vector loads).
  std::vector<SavedValue> savedValues();
  /// The seed the calls that follow draw attention dropout from (0 at
  /// first; layers without dropout ignore it): set a new one for each
  /// forward, and give its backward the same.
  void setRandomSeed(uint64_t seed) { randomSeed_ = seed; }
  /// Whether a backward follows the forwards that come next (true at
  /// first). A graph built on the device then makes the backward's
  /// heavy-row segments together with the forward's, in the forward's one
  /// read-back; false (inference) makes the forward's alone.
  void setBackwardFollows(bool follows) { backwardFollows_ = follows; }

  /// The program of a pass for inputs whose rows allow vector loads
  /// (aligned: as given) or not; compiled (and the unaligned one planned)
  /// on first use.
  const codegen::Program &program(Pass pass, bool aligned = true);
  /// Generates, compiles and loads both passes now (so timing excludes it).
  void prepare(bool backward);
  const CompileReport &compileReport() const { return report_; }
  /// A value the forward saved for the backward (e.g. "args0"), or null:
  /// for tests and inspection.
  const runtime::DeviceMemory *saved(std::string_view name) const;

private:
  struct Compiled;
  Compiled &compiled(Pass pass, bool aligned);
  /// The given program of `pass`, or for unaligned inputs its configs'
  /// unaligned variant (planned here).
  codegen::ProgramPtr programOf(Pass pass, bool aligned) const;
  /// Checks every binding of `pass` against the layer; whether the node
  /// inputs' rows allow vector loads.
  bool checkInputs(Pass pass, const DeviceTensors &inputs) const;
  void bindOwnTargets(Compiled &c, cudaStream_t stream);
  void bindCallerTargets(Compiled &c, const DeviceTensors &results, cudaStream_t stream) const;
  void bindOwnSaved(Pass pass, Compiled &c);
  void bindCallerSaved(Pass pass, Compiled &c, const CallBuffers &call);
  const DeviceTensors &run(Pass pass, const DeviceTensors &inputs, CallBuffers *call, cudaStream_t stream);

  lower::LoweredLayer lowered_;
  DeviceGraph &graph_;
  LayerPrograms programs_;
  RunnerOptions options_;
  uint64_t randomSeed_ = 0;
  bool backwardFollows_ = true;
  std::map<std::pair<Pass, bool>, std::unique_ptr<Compiled>> compiled_;
  /// Values the forward saves for the backward, by name, shared by both
  /// passes; and where every saved value is, these or forward outputs.
  std::map<std::string, runtime::DeviceMemory, std::less<>> saved_;
  std::map<std::string, void *, std::less<>> savedAt_;
  std::map<std::string, void *, std::less<>> callSavedAt_[2]; ///< a call's own saved values, per pass
  bool forwardRan_ = false; ///< the saved values hold something
  CompileReport report_;
};

} // namespace gnnjit::exec
