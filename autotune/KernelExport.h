// Writes the kernels gnnjit would generate for a layer (a library layer or
// one a user wrote) into a folder, without a graph and without a GPU: the
// layer is lowered, its forward and (optionally) backward passes planned by
// the tuner's rule for the graph facts given, every module compiled to PTX,
// and only then DIR
// (created if missing) receives
//   <module>.cu          each generated module's source, exactly as NVRTC
//                        sees it (provenance header included);
//   gnnjit/<name>.cuh    the device headers the sources include, so
//                        `nvcc -c -arch=sm_90 -I DIR DIR/<module>.cu` compiles
//                        any .cu on its own;
//   <module>.ptx         NVRTC's PTX of each module;
//   plan.json            what runs, in order, per pass (steps, targets,
//                        aggregate and saved buffers, describe), and per
//                        module its file, PTX, SHA-256 of the source and, per
//                        kernel, the entry, its role, block size, parameters
//                        (what the runner binds to each) and the launch-grid
//                        rule.
// `gnnjit export` is this for the library's layers.
#pragma once

#include "dsl/Layer.h"
#include "autotune/Rule.h"
#include "lower/TuneConfig.h"
#include "runtime/KernelCache.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace gnnjit::autotune {

/// What the tuning rule sees in place of a graph, and the target.
struct ExportSettings {
  std::string arch; ///< "sm_NN"; empty: the device's, sm_90 without one
  lower::IndexWidth index = lower::IndexWidth::I32;
  bool weighted = false; ///< the graph has edge weights
  /// Rows of medianDegree edges (mean and median) up to maxDegree: above the
  /// heavy-row threshold, modules get segment and combine entries.
  int64_t medianDegree = 8, maxDegree = 32;
  bool local = false;    ///< neighbour ids are local (small lane groups)
  Variant variant = Variant::Auto;
  bool aligned = true;   ///< node inputs' rows allow 16-byte loads
  bool fuseAttentionBackward = true; ///< RuleOptions::fuseAttentionBackward
  bool backward = true;  ///< export the backward pass too
  /// Where the PTX comes from (a module compiled before is not compiled
  /// again); null: the process-wide cache in the default folder.
  runtime::KernelCache *cache = nullptr;
};

struct ExportSummary {
  std::string family; ///< the layer's kernel family
  std::string arch;
  size_t modules = 0;
  std::vector<std::string> files;       ///< written, relative to the folder
  std::vector<std::string> kernelLines; ///< per kernel: pass, entry, block, grid
};

/// Exports `layer` into `dir` (see above). `options` is recorded in
/// plan.json under "options" (a library layer's options; null for others).
/// A layer the kernels cannot run yet is a UserError before anything is
/// written; so is a folder that cannot be written.
ExportSummary exportKernels(const dsl::Layer &layer, const ExportSettings &settings, const std::filesystem::path &dir,
                            const nlohmann::ordered_json &options = nullptr);

} // namespace gnnjit::autotune
