// The attention family's planner: one step per aggregation stage whose
// message is weighted by an edge softmax (the forward) or reads alpha (the
// backward), by codegen/device/attention.cuh's kernels. The forward saves
// what its backward recomputes alpha from (a log-sum-exp per node and
// head) and, when the backward reads it, the aggregate.
#include "lower/Planners.h"

#include "dsl/IRVisitor.h"
#include "dsl/Printer.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace gnnjit::lower {

using namespace gnnjit::dsl;
using llvm::cast;

namespace {

/// InternalError unless the tiling keeps whole heads in a tile and a head's
/// lanes in one group: vec divides the head dim, dim / vec lanes per head
/// divide the group or the group divides them (then a head spans
/// dim / (vec x group) chunks, which divide the chunks).
void checkHeadTiling(const std::string &layer, const RowTiling &t, int64_t dim, int group, int chunks) {
  const int64_t lanes = dim % t.vec == 0 ? dim / t.vec : 0;
  const bool ok = lanes > 0 && (group % lanes == 0 || (lanes % group == 0 && chunks % (lanes / group) == 0));
  if (!ok)
    throwInternalError("layer {}: attention tiling {} does not keep heads of {} floats whole in a group", layer,
                       t.print(), dim);
}

} // namespace

bool AttentionStep::sumsAllEdges(size_t k) const {
  return mode == Mode::Sum && cast<Aggregate>(outputs[k].stage.aggregate.get())->over() == Over::AllEdges;
}

size_t AttentionStep::rowOutputs() const {
  size_t n = 0;
  while (n < outputs.size() && !sumsAllEdges(n))
    ++n;
  return n;
}

int64_t AttentionStep::segmentFloats() const {
  // (The kernels sum at least one output per row: NO in the generated source.)
  return static_cast<int64_t>(std::max<size_t>(1, rowOutputs())) * laneWidth() +
         (mode == Mode::Softmax ? 2 * lanes.heads : 0);
}

int64_t AttentionStep::edgeSumWidth(size_t upTo) const {
  int64_t width = 0;
  for (size_t k = rowOutputs(); k < std::min(upTo, outputs.size()); ++k)
    width += outputs[k].stage.aggregate->shape().size();
  return width;
}

bool isLaneSum(const ExprNode &n, const Shape &lanes) {
  const auto *sum = llvm::dyn_cast<SumAxis>(&n);
  if (!sum || sum->axis() != Axis::Dim || n.operands()[0]->shape() != lanes)
    return false;
  std::vector<const ExprNode *> todo{n.operands()[0].get()};
  while (!todo.empty()) {
    const ExprNode *m = todo.back();
    todo.pop_back();
    const auto *saved = llvm::dyn_cast<Saved>(m);
    if (llvm::isa<SumAxis>(m) || llvm::isa<EdgeSoftmax>(m) || (saved && saved->what() == SavedKind::SoftmaxProb))
      return false;
    if (llvm::isa<Aggregate>(m) || (saved && readsComputed(saved->forward())))
      continue; // read from a buffer
    for (const ExprPtr &op : m->operands())
      todo.push_back(op.get());
  }
  return true;
}

Shape attentionLanes(const AggregationStage &stage) {
  const Shape shape = stage.aggregate->shape();
  if (shape.dim != 1)
    return shape;
  // A per-head aggregate: the lanes hold the [heads, dim] operands of the
  // per-head sums its message (and alpha's score) reads, the first found.
  std::vector<const ExprNode *> todo{cast<Aggregate>(stage.aggregate.get())->message().get()};
  std::set<const ExprNode *> seen;
  while (!todo.empty()) {
    const ExprNode *n = todo.back();
    todo.pop_back();
    if (!seen.insert(n).second)
      continue;
    const auto *sum = llvm::dyn_cast<SumAxis>(n);
    if (sum && sum->axis() == Axis::Dim && n->shape().heads == shape.heads && n->operands()[0]->shape().dim > 1 &&
        n->operands()[0]->shape().heads == shape.heads && n->level() != Level::Global)
      return n->operands()[0]->shape();
    const auto *saved = llvm::dyn_cast<Saved>(n);
    if (llvm::isa<Aggregate>(n) || (saved && saved->what() != SavedKind::SoftmaxProb))
      continue;
    for (const ExprPtr &op : n->operands())
      todo.push_back(op.get());
  }
  return shape;
}

namespace {

/// What forward attention stage k saves, as both passes list it: the
/// log-sum-exp per head, and the aggregate (in its own columns, whatever the
/// lanes' padding) when the backward reads it, an alias of the output that
/// holds it where there is one.
void listStageSaved(PassPlan &plan, size_t k, const AggregationStage &s) {
  plan.saved.push_back({savedLseName(k), s.aggregate->shape().heads, false, false, {}});
  if (!plan.savedValueOf.count(s.aggregate.get()))
    return;
  const std::string name = savedValueName(k);
  const auto alias = plan.savedValueAliases.find(name);
  plan.saved.push_back({name, s.aggregate->shape().size(), false, false,
                        alias == plan.savedValueAliases.end() ? std::string() : alias->second});
}

} // namespace

void planAttentionStage(PlanContext &c, size_t k, const AttentionConfig &config) {
  const AggregationStage &s = c.stages[k];
  const auto *agg = cast<Aggregate>(s.aggregate.get());
  const Shape lanes = attentionLanes(s);
  const int64_t dim = config.laneDim(lanes.dim), width = lanes.heads * dim; // the lanes' (padded) layout
  if (agg->reduce() != Reduce::Sum)
    throwInternalError("layer {}: an attention stage under {}", c.plan.layer, reduceName(agg->reduce()));
  checkTiling(c.plan.layer, config);
  checkHeadTiling(c.plan.layer, config, dim, config.group, config.chunks);
  if (config.heavyThreshold > 0)
    checkHeadTiling(c.plan.layer, config, dim, config.segmentGroup, config.segmentChunks);
  AttentionStep step;
  AttentionOutput output;
  output.stage = s;
  step.config = config;
  step.lanes = lanes;
  step.label = c.label(fmt::format("agg{}", k));
  const std::string base = c.entryBase(step.label);
  if (agg->over() == Over::AllEdges) {
    step.mode = AttentionStep::Mode::EdgeSum;
    const int64_t outWidth = s.aggregate->shape().size();
    output.aggregate = c.addScratch(*s.aggregate, outWidth, true);
    step.outputs.push_back(std::move(output));
    LaunchRule ranges{LaunchRule::Kind::EdgeRanges, config.blockThreads, config.group, width, config.tileWidth(),
                      config.rangeEdges};
    step.kernels.push_back({base + "_ranges", KernelRole::Ranges, ranges});
    step.kernels.push_back({base + "_finish", KernelRole::Finish, LaunchRule{LaunchRule::Kind::ElementBlocks, 256, 1, outWidth, 0, 0}});
    c.plan.steps.push_back(std::move(step));
    return;
  }
  step.direction = directionOf(s);
  step.kernels = tiledEntries(base, config, width);
  if (c.plan.pass == Pass::Forward) {
    if (!s.score)
      throwInternalError("layer {}: a forward attention stage without a score", c.plan.layer);
    step.mode = AttentionStep::Mode::Softmax;
    step.savedLse = savedLseName(k);
    listStageSaved(c.plan, k, s);
    if (c.plan.saved.back().name == savedValueName(k) && c.plan.saved.back().aliasOf.empty())
      step.savedValue = c.plan.saved.back().name; // else none, or the output this step writes is the saved value
  } else {
    step.mode = AttentionStep::Mode::Sum;
  }
  writeResult(c, k, output);
  step.outputs.push_back(std::move(output));
  c.plan.steps.push_back(std::move(step));
}

namespace {

/// The destination-level per-head sums that attention stages over out-edges
/// read at each edge's far end, in first-found order.
std::vector<ExprPtr> farEndHeadSums(const PlanContext &c) {
  std::vector<ExprPtr> found;
  std::set<const ExprNode *> seen;
  std::vector<ExprPtr> todo;
  for (const AggregationStage &s : c.stages)
    if (s.family == Family::Attention && cast<Aggregate>(s.aggregate.get())->over() == Over::OutEdges)
      todo.push_back(cast<Aggregate>(s.aggregate.get())->message());
  while (!todo.empty()) {
    const ExprPtr n = todo.back();
    todo.pop_back();
    if (!seen.insert(n.get()).second)
      continue;
    const auto *sum = llvm::dyn_cast<SumAxis>(n.get());
    if (sum && sum->axis() == Axis::Dim && n->level() == Level::Dst && !c.plan.scratchOf.count(n.get())) {
      found.push_back(n);
      continue;
    }
    const auto *saved = llvm::dyn_cast<Saved>(n.get());
    if (llvm::isa<Aggregate>(n.get()) || (saved && saved->what() != SavedKind::SoftmaxProb))
      continue; // read from buffers, not computed here
    for (const ExprPtr &op : n->operands())
      todo.push_back(op);
  }
  return found;
}

} // namespace

void planAttentionPrologue(PlanContext &c, const PassConfig &config) {
  // Once per node here, read per edge from a buffer of heads floats,
  // instead of gathered and summed again at every edge.
  const std::vector<ExprPtr> sums = farEndHeadSums(c);
  NodeOutputsStep fallback;
  fallback.label = c.label("headsums");
  std::vector<AttentionStep> steps;
  for (const ExprPtr &sum : sums) {
    const Shape shape = sum->operands()[0]->shape();
    // The tiling of an attention stage of the same [heads, dim], if any.
    const AttentionConfig *tiling = nullptr;
    for (size_t k = 0; k < c.stages.size() && !tiling; ++k)
      if (const auto *a = std::get_if<AttentionConfig>(&config.stages[k]);
          a && attentionLanes(c.stages[k]) == shape &&
          cast<Aggregate>(c.stages[k].aggregate.get())->over() != Over::AllEdges)
        tiling = a;
    const int scratch = c.addScratch(*sum, sum->shape().size(), false);
    if (!tiling || !isLaneSum(*sum, shape)) {
      fallback.outputs.push_back({"", sum, scratch});
      fallback.width = std::max(fallback.width, sum->shape().size());
      continue;
    }
    auto same = std::find_if(steps.begin(), steps.end(), [&](const AttentionStep &s) { return s.lanes == shape; });
    if (same == steps.end()) {
      AttentionStep step;
      step.mode = AttentionStep::Mode::HeadSums;
      step.lanes = shape;
      step.config = *tiling;
      step.config.heavyThreshold = 0; // no edges
      step.label = c.label(fmt::format("headsums{}", steps.size()));
      step.headSums.push_back({sum, scratch});
      step.kernels = tiledEntries(c.entryBase(step.label), step.config, step.laneWidth());
      steps.push_back(std::move(step));
    } else {
      same->headSums.push_back({sum, scratch});
    }
  }
  for (AttentionStep &s : steps)
    c.plan.steps.push_back(std::move(s));
  if (fallback.outputs.empty())
    return;
  fallback.kernels.push_back(
      {c.entryBase(fallback.label), KernelRole::Outputs, LaunchRule{LaunchRule::Kind::NodeOutputs, 256, 1, fallback.width, 0, 0}});
  c.plan.steps.push_back(std::move(fallback));
}

namespace {

/// The scratch buffers `root` reads (stopping at each: its value is read, not computed).
std::set<int> scratchRead(const PlanContext &c, const ExprPtr &root) {
  std::set<int> read;
  std::set<const ExprNode *> seen;
  std::vector<const ExprNode *> todo{root.get()};
  while (!todo.empty()) {
    const ExprNode *n = todo.back();
    todo.pop_back();
    if (!seen.insert(n).second)
      continue;
    if (auto it = c.plan.scratchOf.find(n); it != c.plan.scratchOf.end()) {
      read.insert(it->second);
      continue;
    }
    for (const ExprPtr &op : n->operands())
      todo.push_back(op.get());
  }
  return read;
}

/// Whether `b`'s sums can join `a`'s edge loop: the same lanes and tiling,
/// and the same CSR, or (a sum over all edges, whose order of edges does
/// not matter) the incoming CSR, which b's edge ranges walk.
bool sameEdgeLoop(const AttentionStep &a, const AttentionStep &b) {
  if (a.mode != AttentionStep::Mode::Sum || !a.config.fuseBackward || a.lanes != b.lanes ||
      !(normalized(a.config) == normalized(b.config)))
    return false;
  if (b.mode == AttentionStep::Mode::EdgeSum)
    return a.direction == Direction::In;
  return b.mode == AttentionStep::Mode::Sum && a.direction == b.direction;
}

/// A host step that took sums over all edges: its row and segment kernels
/// stride (one partial per group), and a finish kernel per such sum adds
/// its partials in order.
void planStridedEntries(PlanContext &c, AttentionStep &step) {
  std::stable_partition(step.outputs.begin(), step.outputs.end(), [](const AttentionOutput &o) {
    return cast<Aggregate>(o.stage.aggregate.get())->over() != Over::AllEdges;
  });
  const std::string base = c.entryBase(step.label);
  step.kernels = tiledEntries(base, step.config, step.laneWidth());
  for (KernelEntry &e : step.kernels) {
    if (e.launch.kind == LaunchRule::Kind::SpmmRows)
      e.launch.kind = LaunchRule::Kind::StridedRows;
    else if (e.launch.kind == LaunchRule::Kind::SpmmSegments)
      e.launch.kind = LaunchRule::Kind::StridedSegments;
  }
  for (size_t k = 0; k < step.outputs.size(); ++k)
    if (step.sumsAllEdges(k))
      step.kernels.push_back({fmt::format("{}_finish{}", base, k), KernelRole::Finish,
                              LaunchRule{LaunchRule::Kind::ElementBlocks, 256, 1,
                                         step.outputs[k].stage.aggregate->shape().size(), 0, 0},
                              k});
}

/// The most outputs one edge loop sums: each adds a row of accumulators.
constexpr size_t kMaxAttentionOutputs = 4;

} // namespace

void fuseAttentionSums(PlanContext &c) {
  std::vector<Step> &steps = c.plan.steps;
  for (size_t i = 0; i < steps.size(); ++i) {
    auto *host = std::get_if<AttentionStep>(&steps[i]);
    if (!host || host->mode != AttentionStep::Mode::Sum)
      continue;
    // Scratch buffers written from the host's place up to the candidate:
    // a candidate reading one of them must stay after its writer.
    std::set<int> written;
    auto noteWrites = [&written](const AttentionStep &s) {
      for (const AttentionOutput &o : s.outputs)
        if (o.aggregate >= 0)
          written.insert(o.aggregate);
    };
    noteWrites(*host);
    for (size_t j = i + 1; j < steps.size();) {
      auto *other = std::get_if<AttentionStep>(&steps[j]);
      if (!other || (other->mode != AttentionStep::Mode::Sum && other->mode != AttentionStep::Mode::EdgeSum))
        break; // only across the backward's attention edge loops
      bool readsWritten = false;
      for (const AttentionOutput &o : other->outputs)
        for (int k : scratchRead(c, cast<Aggregate>(o.stage.aggregate.get())->message()))
          readsWritten |= written.count(k) > 0;
      if (sameEdgeLoop(*host, *other) && !readsWritten &&
          host->outputs.size() + other->outputs.size() <= kMaxAttentionOutputs) {
        for (AttentionOutput &o : other->outputs)
          host->outputs.push_back(std::move(o));
        steps.erase(steps.begin() + static_cast<std::ptrdiff_t>(j));
        host = &std::get<AttentionStep>(steps[i]);
        continue;
      }
      noteWrites(*other);
      ++j;
    }
    if (host->edgeSumWidth() > 0)
      planStridedEntries(c, *host);
  }
}

void listAttentionSaved(PlanContext &c) {
  for (size_t k = 0; k < c.lowered.forward.size(); ++k) {
    const AggregationStage &s = c.lowered.forward[k];
    if (s.family == Family::Attention)
      listStageSaved(c.plan, k, s);
  }
}

namespace {

/// The per-head sums an attention step's expressions read, split by where
/// their operands live: the row's own node (computed once per row) or the
/// edge and its other end (per edge). Values in buffers (`inBuffers`) are
/// read, not summed again.
class HeadSumCollector {
public:
  HeadSumCollector(Shape lanes, Level rowLevel, const std::map<const ExprNode *, int> &inBuffers)
      : lanes_(lanes), rowLevel_(rowLevel), inBuffers_(inBuffers) {}

  void visit(const ExprPtr &e) {
    if (!seen_.insert(e.get()).second || inBuffers_.count(e.get()))
      return; // done, or computed by an earlier step
    if (isLaneSum(*e, lanes_)) {
      const Level at = e->level();
      (at == rowLevel_ || at == Level::Global ? row : edge).push_back(e);
      return;
    }
    if (const auto *saved = llvm::dyn_cast<Saved>(e.get())) {
      // alpha is recomputed from its score; a recomputable forward value is
      // emitted in place; other saved values are read from buffers.
      if (saved->what() == SavedKind::SoftmaxProb)
        visit(saved->forward()->operands()[0]);
      else if (saved->what() == SavedKind::Value && !readsComputed(saved->forward()))
        visit(saved->forward());
      return;
    }
    if (llvm::isa<Aggregate>(e.get()))
      return; // read from a buffer
    for (const ExprPtr &op : e->operands())
      visit(op);
  }

  std::vector<ExprPtr> row, edge;

private:
  Shape lanes_;
  Level rowLevel_;
  const std::map<const ExprNode *, int> &inBuffers_;
  std::set<const ExprNode *> seen_;
};

/// The per-head sums of step `s` (AttentionStep::rowSums, edgeSums), with
/// every scratch buffer of the finished plan known.
void collectHeadSums(const PassPlan &plan, AttentionStep &s) {
  if (s.mode == AttentionStep::Mode::HeadSums) {
    for (const auto &[sum, scratch] : s.headSums)
      s.rowSums.push_back(sum); // computed here, though a buffer holds them after
    return;
  }
  HeadSumCollector collect(s.lanes, s.direction == Direction::In ? Level::Dst : Level::Src, plan.scratchOf);
  if (s.mode == AttentionStep::Mode::Softmax)
    collect.visit(s.outputs[0].stage.score);
  for (const AttentionOutput &o : s.outputs)
    collect.visit(s.mode == AttentionStep::Mode::Softmax ? o.stage.value
                                                         : cast<Aggregate>(o.stage.aggregate.get())->message());
  s.rowSums = std::move(collect.row);
  s.edgeSums = std::move(collect.edge);
}

} // namespace

void finishAttentionSteps(PlanContext &c) {
  for (Step &step : c.plan.steps) {
    auto *s = std::get_if<AttentionStep>(&step);
    if (!s)
      continue;
    collectHeadSums(c.plan, *s);
    const bool rows = s->mode == AttentionStep::Mode::Softmax || s->mode == AttentionStep::Mode::Sum;
    if (rows && s->config.heavyThreshold > 0)
      s->merge = {SegmentMerge::Kind::Partials, s->segmentFloats(), 0};
  }
}

} // namespace gnnjit::lower
