// The last IR of lowering, what planning (lower/Pipeline.h's planPass) makes
// of a lowered layer and a config per stage: every kernel a pass runs, in
// order, by role, what each reads and writes, the buffers the pass owns and
// how heavy rows' segments are merged in them, the values the forward saves
// for the backward, the bounds the graph must meet, and how each kernel is
// launched. Each of those facts is stated here once. One step type per kind
// of work; one planner per family (lower/PlanSpmm.cpp, PlanReduction.cpp,
// PlanAttention.cpp, PlanNodes.cpp). codegen::emit turns a PassPlan into
// CUDA modules; exec binds buffers to kernel parameters and launches what
// the plan says.
#pragma once

#include "lower/LaunchRule.h"
#include "lower/Stages.h"
#include "lower/TuneConfig.h"

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace gnnjit::lower {

enum class Pass : uint8_t { Forward, Backward };
/// "fwd" or "bwd": kernel and module names.
std::string_view passName(Pass pass);

/// Which CSR a step walks: In, rows are destinations (the graph's incoming
/// CSR); Out, rows are sources (the transpose).
enum class Direction : uint8_t { In, Out };
Direction directionOf(const AggregationStage &stage);

/// A value the pass writes for the caller: a layer output (forward) or an
/// input's gradient (backward).
struct Target {
  std::string name;
  dsl::ExprPtr value;   ///< null: zero (an input no output depends on)
  bool global = false;  ///< one row (parameters)
  bool perEdge = false; ///< one row per edge id (an edge input's gradient); otherwise one per node
  int64_t width = 0;
  int64_t rows(int64_t nodes, int64_t edges) const { return global ? 1 : perEdge ? edges : nodes; }
};

/// Scratch rows a pass owns: an aggregate kept between kernels.
struct ScratchBuffer {
  int64_t width = 0;
  bool global = false; ///< one row; otherwise one row per node
};

/// A value the forward pass writes and the backward reads, owned by the
/// runner across both passes (e.g. a max aggregation's arg index).
struct SavedBuffer {
  std::string name;
  int64_t width = 0;
  bool perEdge = false; ///< one row per edge; otherwise one per node
  bool positions = false; ///< CSR positions (the graph's index type: -1 for none); otherwise floats
  /// A forward target that holds these values already (an attention output
  /// that is its aggregate as is): no memory of its own, no second write;
  /// the backward reads the forward's output.
  std::string aliasOf;
};

/// What a kernel of a step does: the launcher launches a step's kernels by
/// role, never by position.
enum class KernelRole : uint8_t {
  Rows,     ///< rows of the CSR (the light ones when heavy rows are split); strided when the step sums over all edges
  Segments, ///< heavy rows' segments of edges
  Combine,  ///< heavy rows: their segments merged, then stored like light rows
  Values,   ///< cuSPARSE's matrix values, computed once per graph
  Bound,    ///< an arg scatter: per-block bounds of its contributions
  Scale,    ///< an arg scatter: the fixed-point scale from those bounds
  Scatter,  ///< an arg scatter: each contribution added at its arg edge's source
  Convert,  ///< an arg scatter: the integer sums converted, the epilogue applied
  Ranges,   ///< a sum over all edges: ranges of consecutive CSR positions, a partial each
  Partials, ///< a sum over all nodes or edges: a partial per block
  Finish,   ///< partials added in a fixed order
  Outputs,  ///< element-wise targets, per node, per edge or once
};
std::string_view kernelRoleName(KernelRole role);

/// One entry point of a step's module, its role and its launch rule.
struct KernelEntry {
  std::string entry;
  KernelRole role = KernelRole::Rows;
  LaunchRule launch;
  /// A Finish kernel of an attention step's sums over all edges: the
  /// output (of AttentionStep::outputs) whose partials it adds.
  size_t output = 0;
};

/// What a tiled step's heavy-row segments leave for its combine kernel,
/// stated once for the launcher (sizes, fills), the memory estimate and
/// the kernels (whose generated source checks it against the layout the
/// device code uses, at compile time).
struct SegmentMerge {
  enum class Kind : uint8_t {
    Partials,         ///< floats per segment, folded in segment order
    PartialsWithArgs, ///< ... and as many arg positions (a max or min)
    PackedMax,        ///< 8-byte (value, position) slots per heavy row, merged by atomics
    PackedMin,
  };
  Kind kind = Kind::Partials;
  /// Partials: floats each segment writes (the outputs' sums, then for an
  /// attention softmax a state (max, sum) per head). Packed: slots per
  /// heavy row.
  int64_t perUnit = 0;
  /// Packed: the byte every slot is set to before the segments run (the
  /// empty state: 0x00 for a max, 0xff for a min).
  uint8_t fill = 0;
  bool packed() const { return kind == Kind::PackedMax || kind == Kind::PackedMin; }
};

/// An SpMM-family aggregation, by the generated CSR kernel or cuSPARSE.
struct SpmmStep {
  AggregationStage stage;
  SpmmConfig config;
  Direction direction = Direction::In;
  std::string label;         ///< module label, e.g. "fwd_agg0"
  std::string target;        ///< the target written (fused or direct), or empty
  int aggregate = -1;        ///< else the scratch buffer written
  dsl::ExprPtr fusedOutput;  ///< generated kernel: the target's value, element-wise in the aggregate
  std::string gathered;      ///< cuSPARSE: the input whose rows it multiplies
  SegmentMerge merge;        ///< the generated kernel's heavy rows (when its tiling splits them)
  std::vector<KernelEntry> kernels;
  bool cusparse() const { return config.backend == SpmmConfig::Backend::Cusparse; }
};

/// A reduction-family aggregation over in- or out-edges: max or min (with
/// the arg position of each result saved for the backward when it reads
/// one), or the sum or mean of a general message, fused with the element-wise
/// epilogue of the one target that reads it.
struct ReductionStep {
  AggregationStage stage;
  ReductionConfig config;
  Direction direction = Direction::In;
  std::string label;
  std::string target;       ///< the target written, or empty
  int aggregate = -1;       ///< else the scratch buffer written
  dsl::ExprPtr fusedOutput; ///< the target's value, element-wise in the aggregate
  std::string savedArgs;    ///< max/min: the saved buffer of arg positions it writes, or empty
  SegmentMerge merge;       ///< its heavy rows (when its tiling splits them)
  std::vector<KernelEntry> kernels;
};

/// The backward of a max/min to the sources: aggregate[sum, out_edges] of
/// argmatch(A) x rest, where A is a forward max/min over in-edges. Each
/// (destination i, element f) has one arg edge p (A's saved position) from
/// source j: rest at p is added into (j, f). Deterministic: contributions
/// are scaled to 64-bit integers (the scale from their largest magnitude and
/// the largest out-degree, found by a first kernel) whose atomic sum does not
/// depend on order; NaN and infinities are carried as flags; a last kernel
/// converts and applies the epilogue.
struct ArgScatterStep {
  AggregationStage stage;
  std::string label;
  std::string savedArgs;    ///< the forward aggregation's saved arg positions
  dsl::ExprPtr rest;        ///< the message without its arg match, read at the arg edge
  std::string target;       ///< the target written, or empty
  int aggregate = -1;       ///< else the scratch buffer written
  dsl::ExprPtr fusedOutput; ///< the target's value, element-wise in the aggregate
  /// Floats each block of the Bound kernel writes (the largest magnitude
  /// of its finite contributions, and how many were not finite).
  int64_t boundFloatsPerBlock = 2;
  std::vector<KernelEntry> kernels; ///< bound, scale, scatter, convert
};

/// One aggregate an attention step sums, and where its result goes.
struct AttentionOutput {
  AggregationStage stage;
  std::string target;       ///< the target written, or empty
  int aggregate = -1;       ///< else the scratch buffer written
  dsl::ExprPtr fusedOutput; ///< the target's value, element-wise in the aggregate
};

/// An attention-family edge loop (codegen/device/attention.cuh). Per row of
/// the CSR it walks and per edge, the per-head sums (over the head dim) its
/// expressions read are computed by the lanes of each head and reduced
/// across them; then, by mode:
///  - Softmax (forward): an online softmax of the score and the weighted sum
///    of the value; saves the log-sum-exp per (node, head), and the
///    aggregate itself when the backward reads it. No per-edge value reaches
///    memory.
///  - Sum (backward, over in- or out-edges): the sums of messages that may
///    recompute alpha = exp(score - lse) from the saved log-sum-exp, and
///    over the incoming CSR, sums over all edges (parameters' gradients)
///    in the same loop.
///  - EdgeSum (a parameter's gradient, a sum over all edges): the message's
///    sum over ranges of consecutive CSR positions into per-range partials,
///    which a finish kernel adds in a fixed order (deterministic).
///  - HeadSums (before the backward's edge loops): per-head sums at each
///    node that kernels over out-edges read at the far end (<dO_i, O_i>),
///    into scratch buffers of heads floats per node; no edges, no aggregate.
struct AttentionStep {
  enum class Mode : uint8_t { Softmax, Sum, EdgeSum, HeadSums };
  AttentionConfig config;
  Mode mode = Mode::Softmax;
  Direction direction = Direction::In;
  std::string label;
  /// The aggregates the edge loop sums, each with where it goes: one for
  /// Softmax and EdgeSum, none for HeadSums.
  std::vector<AttentionOutput> outputs;
  std::string savedLse;     ///< Softmax: the saved buffer of log-sum-exps it writes (N x heads)
  std::string savedValue;   ///< Softmax: the saved buffer of the aggregate it writes, or empty
  /// HeadSums: the sums (sum_dim nodes at destinations, of one operand
  /// shape) and the scratch buffer each is written to.
  std::vector<std::pair<dsl::ExprPtr, int>> headSums;
  /// The per-head sums (isLaneSum) the step's expressions read, computed by
  /// the lanes of each head and reduced across them: those whose operands
  /// live at the row's own node (once per row; for HeadSums, the sums
  /// above) and those read per edge. Decided here; codegen emits them.
  std::vector<dsl::ExprPtr> rowSums, edgeSums;
  SegmentMerge merge; ///< heavy rows (Softmax and Sum steps whose tiling splits them)
  /// [heads, dim] of the rows the kernel's lanes hold: the aggregate's, or
  /// for a per-head aggregate ([heads, 1], GAT's score gradients) the
  /// operands' of the per-head sums its message reads.
  dsl::Shape lanes;
  std::vector<KernelEntry> kernels;
  /// Output k has one value per head while lanes hold [heads, dim].
  bool perHead(size_t k) const { return outputs[k].stage.aggregate->shape().dim == 1 && lanes.dim > 1; }
  /// Floats per row the lanes cover: heads x the config's lane dim (the
  /// real dim, or its padding: AttentionConfig::paddedDim).
  int64_t laneWidth() const { return lanes.heads * config.laneDim(lanes.dim); }
  /// Output k of a Sum step is a sum over all edges (after the per-row
  /// outputs): each group of the strided kernels adds it over the edges it
  /// walks into a partial, and finish kernels add the partials in order.
  bool sumsAllEdges(size_t k) const;
  /// The outputs summed per row (those before the sums over all edges).
  size_t rowOutputs() const;
  /// The elements of the sums over all edges among outputs [rowOutputs(), upTo).
  int64_t edgeSumWidth(size_t upTo = SIZE_MAX) const;
  /// Floats each heavy-row segment writes: every row output's sums in the
  /// lanes' layout, then for the softmax a state (max, sum) per head.
  int64_t segmentFloats() const;
};

/// The lane shape of an attention stage (AttentionStep::lanes).
dsl::Shape attentionLanes(const AggregationStage &stage);

/// Whether `n` is a per-head sum the attention kernels' lanes add and reduce:
/// sum_dim of a `lanes`-shaped value that reads no other sum and no alpha
/// (aggregates and saved values are read from buffers). Other sums are
/// emitted as loops.
bool isLaneSum(const dsl::ExprNode &n, const dsl::Shape &lanes);

/// Per-edge targets (edge inputs' gradients), evaluated at every edge of
/// the incoming CSR and written at the edge's id.
struct EdgeOutputsStep {
  std::string label;
  std::vector<std::pair<std::string, dsl::ExprPtr>> outputs;
  int64_t width = 0; ///< the widest output
  std::vector<KernelEntry> kernels;
};

/// A sum over all edges of a per-edge value (a parameter's gradient), in
/// two passes like a node sum.
struct EdgeSumStep {
  AggregationStage stage;
  std::string label;
  int aggregate = -1; ///< the global scratch buffer written
  std::vector<KernelEntry> kernels;
};

/// A sum over all nodes (a scalar parameter's gradient), in two passes.
struct NodeSumStep {
  AggregationStage stage;
  std::string label;
  int aggregate = -1; ///< the global scratch buffer written
  std::vector<KernelEntry> kernels;
};

/// Targets computed element-wise per node (or once, for global targets)
/// from inputs and aggregates already in buffers.
struct NodeOutputsStep {
  struct Output {
    std::string name;   ///< the target written, or empty
    dsl::ExprPtr value;
    int scratch = -1;   ///< else the scratch buffer written (a per-node value later kernels read)
  };
  bool global = false;
  std::string label;
  std::vector<Output> outputs;
  int64_t width = 0; ///< the widest output
  std::vector<KernelEntry> kernels;
};

/// A target no output depends on: zero-filled.
struct ZeroStep {
  std::string target;
};

using Step = std::variant<SpmmStep, ReductionStep, ArgScatterStep, AttentionStep, NodeSumStep, EdgeSumStep,
                          NodeOutputsStep, EdgeOutputsStep, ZeroStep>;

struct PassPlan {
  Pass pass = Pass::Forward;
  std::string layer;
  /// What it was planned with (the tuning's config per stage, the graph's
  /// index type and weights): kernels read index_t and edge weights by it.
  PassConfig config;
  IndexWidth index = IndexWidth::I32;
  bool weighted = false;
  /// The element type of every float buffer the kernels read and write.
  dsl::DType storage = dsl::DType::F32;
  /// Rows must have fewer edges than this (a packed merge keeps positions
  /// in 31 bits); 0: no limit. Checked once per graph (exec's
  /// checkLaunchable), not per launch.
  int64_t rowEdgeLimit = 0;
  std::vector<Step> steps;
  std::vector<Target> targets;
  std::vector<ScratchBuffer> scratch;
  std::vector<SavedBuffer> saved;
  /// Scratch buffers by the aggregate each holds (what later kernels read).
  std::map<const dsl::ExprNode *, int> scratchOf;
  /// Saved arg positions by the forward max/min aggregate they belong to.
  std::map<const dsl::ExprNode *, std::string> savedArgsOf;
  /// Saved log-sum-exps by the forward edge softmax they normalize (the
  /// backward recomputes alpha from them).
  std::map<const dsl::ExprNode *, std::string> savedLseOf;
  /// Saved attention aggregates by the forward aggregate node.
  std::map<const dsl::ExprNode *, std::string> savedValueOf;
  /// Saved aggregates (by name) that a forward output holds as they are, by
  /// that output's name (SavedBuffer::aliasOf).
  std::map<std::string, std::string, std::less<>> savedValueAliases;

  const Target &target(std::string_view name) const;
  /// Readable summary, one line per step (--explain, plan.json, run's report).
  std::string describe() const;
};

/// The name of the saved buffer of arg positions of forward stage `k` (a
/// max or min aggregation whose backward reads them).
std::string savedArgsName(size_t k);
/// The saved log-sum-exps and the saved aggregate of forward attention stage `k`.
std::string savedLseName(size_t k);
std::string savedValueName(size_t k);

/// The stages a pass plans, in order: configs are given in this order.
const std::vector<AggregationStage> &stagesOf(const LoweredLayer &lowered, Pass pass);

/// Whether cuSPARSE can run an SpMM stage: one scalar weight per edge and a
/// layer input gathered whole.
bool cusparseCanRun(const AggregationStage &stage);

/// The target an aggregation stage's kernel can write directly: the one
/// target (of `targets`) that reads the aggregate, when nothing else does
/// and it is element-wise in it (fusable), and whether the target is the
/// aggregate itself (direct: no epilogue at all).
struct StageFusion {
  int target = -1;
  bool fusable = false, direct = false;
};
StageFusion fusionOf(const std::vector<AggregationStage> &stages, const std::vector<Target> &targets, size_t stage);

/// The targets a pass writes: the layer's outputs, or a gradient per input.
std::vector<Target> targetsOf(const LoweredLayer &lowered, Pass pass);

/// Whether `root` reads `aggregate` only element-wise: every node between
/// them has the aggregate's size and is unary, binary or select without
/// broadcasting it, or a reshape (so element f, by flat index, of root reads
/// element f of the aggregate and nothing else).
bool isElementwiseIn(const dsl::ExprPtr &root, const dsl::ExprNode &aggregate);

} // namespace gnnjit::lower
