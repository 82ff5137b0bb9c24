// What one pass (forward or backward) of a lowered layer runs, in order:
// aggregation steps (a generated SpMM kernel or cuSPARSE), node-sum steps
// (sums over all nodes, e.g. a scalar parameter's gradient), and node steps
// that compute the outputs no aggregation step wrote. Planning needs no GPU
// and no graph, only the few graph facts in ProgramConfig: `export` prints a
// program's kernels, the runner launches them.
#pragma once

#include "codegen/NodeKernel.h"
#include "codegen/SpmmKernel.h"
#include "lower/KernelPlan.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gnnjit::exec {

enum class Pass : uint8_t { Forward, Backward };
std::string_view passName(Pass pass);

/// How an SpMM aggregation runs.
enum class Variant : uint8_t { Auto, Generated, Cusparse };
std::string_view variantName(Variant variant);
/// Parses "auto", "generated" or "cusparse"; UserError otherwise.
Variant parseVariant(std::string_view text);

struct SpmmChoice {
  bool cusparse = false;
  codegen::SpmmTuning tuning; ///< for the generated kernel
};

struct ProgramConfig {
  codegen::IndexWidth index = codegen::IndexWidth::I32;
  bool weighted = false;
  /// Picks the variant and tuning of each SpMM stage (its aggregate's width
  /// is stage.aggregate->shape().size()). `cusparsePossible` says whether
  /// cuSPARSE can run it (one scalar weight per edge, a plain gathered
  /// input); `cusparseNeedsPass` whether it would then need a node pass for
  /// an epilogue the generated kernel fuses.
  std::function<SpmmChoice(const lower::AggregationStage &stage, bool cusparsePossible, bool cusparseNeedsPass)>
      chooseSpmm;
};

/// A value a program writes for the caller: a layer output (forward) or an
/// input's gradient (backward).
struct Target {
  std::string name;
  dsl::ExprPtr value;  ///< null: zero (an input no output depends on)
  bool global = false; ///< one row (parameters); otherwise one row per node (or per edge, refused)
  int64_t width = 0;
};

struct Step {
  enum class Kind : uint8_t { Spmm, Cusparse, NodeSum, NodeOutputs, GlobalOutputs, Zero } kind;
  int module = -1;               ///< index into Program::modules (the edge-values kernel for Cusparse)
  int aggregate = -1;            ///< aggregate buffer written, or -1 when a target is written
  std::string target;            ///< the target written (Spmm fused, Cusparse direct, Zero)
  lower::AggregationStage stage; ///< Spmm, Cusparse, NodeSum
  codegen::SpmmTuning tuning;    ///< Spmm
  std::string gathered;          ///< Cusparse: the input whose rows are gathered
  int64_t width = 0; ///< floats per row: the aggregate's (Spmm, Cusparse, NodeSum), widest output (node steps)
};

struct Program {
  Pass pass = Pass::Forward;
  std::vector<codegen::GeneratedModule> modules;
  std::vector<Step> steps;
  std::vector<int64_t> aggregateWidths; ///< scratch buffers: one row per node ([1, width] for global ones)
  std::vector<bool> aggregateGlobal;
  std::vector<Target> targets;
  /// Readable summary (one line per step), for --explain and plan.json.
  std::string describe() const;
};

/// Plans `pass` of `lowered`. A stage of a family without generated kernels
/// yet, or a backward plan that reads saved forward values, is a UserError
/// that says so.
Program planProgram(const lower::LoweredLayer &lowered, Pass pass, const ProgramConfig &config);

} // namespace gnnjit::exec
