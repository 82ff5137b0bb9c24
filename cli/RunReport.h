// What `gnnjit run` prints, as text or as one JSON object (--json), from the
// results the run gathered: checksums of every output and gradient, times,
// the kernels and memory of a GPU run, the preflight's estimate, and how far
// the GPU is from the fp64 reference under --check.
#pragma once

#include "cli/CudaRun.h"
#include "cli/RunPreflight.h"
#include "exec/HostTransfer.h"
#include "exec/TensorOps.h"
#include "layers/Library.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gnnjit::cli {

/// Tolerance of --check: exit 3 beyond it.
inline constexpr double kCheckTolerance = 1e-4;

struct NamedChecksum {
  std::string name;
  int64_t rows = 0, cols = 0;
  exec::Checksum sum;
};

/// How far one GPU result is from the reference.
struct CheckRow {
  std::string what, name; ///< "output" or "grad"
  exec::Agreement agreement;
};

struct RunResult {
  const layers::LayerInfo *info = nullptr;
  std::string layerHash, layerIr; ///< layerIr: printed with --print-layer
  std::string graphName;
  int64_t nodes = 0, edges = 0;
  layers::LayerOptions options;
  std::string variant;
  uint64_t seed = 0;
  std::string inputsDir; ///< empty: random inputs
  bool backward = false, check = false;
  int reps = 0;
  std::vector<NamedChecksum> outputs, gradients;
  double graphMs = 0, lowerMs = 0, forwardMs = 0, backwardMs = 0;
  double referenceForwardMs = 0, referenceBackwardMs = 0; ///< --check on the GPU
  std::optional<GpuStats> gpu;
  std::optional<CompileOnlyResult> compiled;
  RunMemory estimate;
  std::vector<CheckRow> checks;
};

void printRunText(const RunResult &r);
void printRunJson(const RunResult &r);

/// Whether every check row is within kCheckTolerance.
bool checksPass(const RunResult &r);

} // namespace gnnjit::cli
