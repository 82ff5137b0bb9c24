#include "lower/KernelPlan.h"
#include "lower/Planners.h"

#include "dsl/IRVisitor.h"
#include "dsl/Printer.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <set>

namespace gnnjit::lower {

using namespace gnnjit::dsl;
using llvm::cast;
using llvm::isa;

std::string_view passName(Pass pass) { return pass == Pass::Forward ? "fwd" : "bwd"; }

std::string_view kernelRoleName(KernelRole role) {
  switch (role) {
  case KernelRole::Rows:
    return "rows";
  case KernelRole::Segments:
    return "segments";
  case KernelRole::Combine:
    return "combine";
  case KernelRole::Values:
    return "values";
  case KernelRole::Bound:
    return "bound";
  case KernelRole::Scale:
    return "scale";
  case KernelRole::Scatter:
    return "scatter";
  case KernelRole::Convert:
    return "convert";
  case KernelRole::Ranges:
    return "ranges";
  case KernelRole::Partials:
    return "partials";
  case KernelRole::Finish:
    return "finish";
  case KernelRole::Outputs:
    return "outputs";
  }
  return "?";
}

Direction directionOf(const AggregationStage &stage) {
  return cast<Aggregate>(stage.aggregate.get())->over() == Over::OutEdges ? Direction::Out : Direction::In;
}

const std::vector<AggregationStage> &stagesOf(const LoweredLayer &lowered, Pass pass) {
  return pass == Pass::Forward ? lowered.forward : lowered.backward.stages;
}

bool isElementwiseIn(const ExprPtr &root, const ExprNode &aggregate) {
  std::set<const ExprNode *> reaches; // nodes that depend on the aggregate
  for (const ExprPtr &n : postOrder({root})) {
    if (n.get() == &aggregate) {
      reaches.insert(n.get());
      continue;
    }
    bool depends = false, sameShapeOperands = true;
    for (const ExprPtr &op : n->operands())
      if (reaches.count(op.get())) {
        depends = true;
        sameShapeOperands &= op->shape() == n->shape();
      }
    if (!depends)
      continue;
    // Element f (flat) of the node reads element f of what it depends on:
    // element-wise nodes that broadcast nothing of it, and reshapes (an
    // attention layer's concatenation of heads).
    const bool elementwise = (isa<Unary>(n.get()) || isa<Binary>(n.get()) || isa<Select>(n.get())) && sameShapeOperands;
    if (!(elementwise || isa<Reshape>(n.get())) || n->shape().size() != aggregate.shape().size())
      return false;
    reaches.insert(n.get());
  }
  return reaches.count(root.get()) > 0;
}

bool cusparseCanRun(const AggregationStage &stage) {
  return stage.family == Family::SpMM && stage.scalarWeight && isPlainGather(stage);
}

namespace {

bool contains(const ExprPtr &root, const ExprNode &node) {
  for (const ExprPtr &n : postOrder({root}))
    if (n.get() == &node)
      return true;
  return false;
}

/// The number of aggregate nodes (of `all`) that `root` reads.
int countAggregates(const ExprPtr &root, const std::vector<AggregationStage> &all) {
  int count = 0;
  for (const AggregationStage &s : all)
    count += contains(root, *s.aggregate) ? 1 : 0;
  return count;
}

std::string shortText(const AggregationStage &s) {
  const auto *agg = cast<Aggregate>(s.aggregate.get());
  return fmt::format("aggregate[{}, {}] {}", reduceName(agg->reduce()), overName(agg->over()),
                     shapeText(s.aggregate->shape()));
}

/// Whether the kernels can read `n`: every node but an unsaved softmax;
/// saved values other than a max/min's arg match, forward values they can
/// recompute (no aggregate inside), alpha (recomputed from a saved
/// log-sum-exp) and the aggregates the attention forward saves.
bool readable(const ExprNode &n, const PassPlan &plan) {
  if (isa<EdgeSoftmax>(&n))
    return false;
  const auto *saved = llvm::dyn_cast<Saved>(&n);
  if (!saved || saved->what() == SavedKind::ArgMatch)
    return true;
  if (saved->what() == SavedKind::SoftmaxProb)
    return plan.savedLseOf.count(saved->forward().get()) > 0;
  return !readsComputed(saved->forward()) || plan.savedValueOf.count(saved->forward().get()) > 0;
}

} // namespace

void checkGenerated(const LoweredLayer &lowered, Pass pass, const PassPlan &plan) {
  const std::string &layer = lowered.layer.name();
  for (const InputPtr &in : lowered.layer.inputs())
    if (in->dtype != plan.storage)
      throwUserError("layer {}: input '{}' is {}; generated kernels take {} inputs only so far", layer, in->name,
                     dtypeName(in->dtype), dtypeName(plan.storage));
  const char *passText = pass == Pass::Forward ? "forward" : "backward";
  for (const AggregationStage &s : stagesOf(lowered, pass)) {
    const auto *agg = cast<Aggregate>(s.aggregate.get());
    const bool wholeSum = (agg->over() == Over::AllNodes || agg->over() == Over::AllEdges) && agg->reduce() == Reduce::Sum;
    if ((agg->over() == Over::AllEdges && !wholeSum) || (agg->over() == Over::AllNodes && !wholeSum))
      throwUserError("layer {}: kernels of the {} family ({}) are not generated yet; run it with --backend cpu. "
                     "The {} aggregation:\n{}",
                     layer, familyName(s.family), s.reason, passText, printExpr(s.aggregate));
  }
  // What targets and backward messages read, down to the aggregates steps
  // compute and the saved values (whose forward expressions run in the
  // forward); a forward softmax is its attention step's own.
  std::vector<ExprPtr> todo;
  for (const Target &t : plan.targets)
    if (t.value)
      todo.push_back(t.value);
  if (pass == Pass::Backward)
    for (const AggregationStage &s : stagesOf(lowered, pass))
      todo.push_back(cast<Aggregate>(s.aggregate.get())->message());
  std::set<const ExprNode *> seen;
  while (!todo.empty()) {
    const ExprPtr n = todo.back();
    todo.pop_back();
    if (!seen.insert(n.get()).second)
      continue;
    if (!readable(*n, plan))
      throwUserError("layer {}: the {} pass reads {} (a forward value no kernel saves); those kernels are not "
                     "generated yet",
                     layer, passText, printExpr(n));
    if (isa<Aggregate>(n.get()) || isa<Saved>(n.get()))
      continue;
    for (const ExprPtr &op : n->operands())
      todo.push_back(op);
  }
}

namespace {

/// The forward target that forward stage k writes with its aggregate as
/// it is (a fused output whose value is the aggregate, reshapes aside: the
/// same floats in the same order), or empty.
std::string targetHoldingAggregate(const LoweredLayer &lowered, size_t k) {
  const std::vector<Target> targets = targetsOf(lowered, Pass::Forward);
  const StageFusion fusion = fusionOf(lowered.forward, targets, k);
  if (!fusion.fusable)
    return {};
  const Target &t = targets[static_cast<size_t>(fusion.target)];
  const ExprNode *n = t.value.get();
  while (isa<Reshape>(n))
    n = n->operands()[0].get();
  return n == lowered.forward[k].aggregate.get() ? t.name : std::string();
}

/// The forward attention stages' saved buffers: a log-sum-exp per (node,
/// head) for every softmax, and the aggregate where the backward reads it.
void attentionSaved(const LoweredLayer &lowered, PassPlan &plan) {
  std::vector<ExprPtr> roots;
  for (const InputGradient &g : lowered.backward.plan.gradients)
    roots.insert(roots.end(), g.terms.begin(), g.terms.end());
  std::set<const ExprNode *> readValues;
  for (const ExprPtr &n : postOrder(roots))
    if (const auto *saved = llvm::dyn_cast<Saved>(n.get()); saved && saved->what() == SavedKind::Value)
      readValues.insert(saved->forward().get());
  for (size_t k = 0; k < lowered.forward.size(); ++k) {
    const AggregationStage &s = lowered.forward[k];
    if (s.family != Family::Attention)
      continue;
    for (const ExprPtr &n : postOrder({cast<Aggregate>(s.aggregate.get())->message()}))
      if (isa<EdgeSoftmax>(n.get()))
        plan.savedLseOf[n.get()] = savedLseName(k);
    if (!readValues.count(s.aggregate.get()))
      continue;
    plan.savedValueOf[s.aggregate.get()] = savedValueName(k);
    if (const std::string target = targetHoldingAggregate(lowered, k); !target.empty())
      plan.savedValueAliases[savedValueName(k)] = target;
  }
}

/// Forward stages whose arg positions the backward reads (Saved ArgMatch).
std::set<size_t> stagesWithSavedArgs(const LoweredLayer &lowered) {
  std::vector<ExprPtr> roots;
  for (const InputGradient &g : lowered.backward.plan.gradients)
    roots.insert(roots.end(), g.terms.begin(), g.terms.end());
  std::set<size_t> stages;
  for (const ExprPtr &n : postOrder(roots))
    if (const auto *saved = llvm::dyn_cast<Saved>(n.get()); saved && saved->what() == SavedKind::ArgMatch) {
      size_t k = 0;
      while (k < lowered.forward.size() && lowered.forward[k].aggregate.get() != saved->forward().get())
        ++k;
      if (k == lowered.forward.size())
        throwInternalError("layer {}: an arg match reads an aggregation that is not a forward stage",
                           lowered.layer.name());
      stages.insert(k);
    }
  return stages;
}

} // namespace

std::vector<Target> targetsOf(const LoweredLayer &lowered, Pass pass) {
  std::vector<Target> targets;
  if (pass == Pass::Forward) {
    for (const LayerOutput &o : lowered.layer.outputs())
      targets.push_back({o.name, o.value, false, false, o.value->shape().size()});
    return targets;
  }
  for (const InputGradient &g : lowered.backward.plan.gradients) {
    const InputDecl &in = *g.input;
    targets.push_back(
        {in.name, fold(BinaryOp::Add, g.terms), in.kind == InputKind::Param, in.kind == InputKind::Edge, in.shape.size()});
  }
  return targets;
}

StageFusion fusionOf(const std::vector<AggregationStage> &stages, const std::vector<Target> &targets, size_t k) {
  const AggregationStage &s = stages[k];
  // The one target this aggregate could be fused into: it must be the
  // aggregate's only reader (another aggregation reading it needs a buffer).
  StageFusion f;
  int users = 0;
  for (size_t t = 0; t < targets.size(); ++t)
    if (targets[t].value && contains(targets[t].value, *s.aggregate))
      f.target = static_cast<int>(t), ++users;
  bool readByAggregation = false;
  for (size_t other = 0; other < stages.size(); ++other)
    readByAggregation |= other != k && contains(cast<Aggregate>(stages[other].aggregate.get())->message(), *s.aggregate);
  if (users != 1 || readByAggregation)
    return {-1, false, false};
  const Target &t = targets[static_cast<size_t>(f.target)];
  f.fusable =
      !t.global && !t.perEdge && countAggregates(t.value, stages) == 1 && isElementwiseIn(t.value, *s.aggregate);
  f.direct = f.fusable && t.value.get() == s.aggregate.get();
  if (!f.fusable)
    f.target = -1;
  return f;
}

void checkTiling(const std::string &layer, const RowTiling &t) {
  auto groupOk = [](int g) { return g >= 1 && g <= 32 && (g & (g - 1)) == 0; };
  if (!groupOk(t.group) || !groupOk(t.segmentGroup) || (t.vec != 1 && t.vec != 2 && t.vec != 4) || t.chunks < 1 ||
      t.segmentChunks < 1 || t.blockThreads % 32 != 0 || t.blockThreads < 32 || t.blockThreads > 1024 ||
      t.heavyThreshold < 0 || t.segmentLength < 1)
    throwInternalError("layer {}: bad row tiling {}", layer, t.print());
}

std::vector<KernelEntry> tiledEntries(const std::string &base, const RowTiling &t, int64_t width) {
  std::vector<KernelEntry> entries;
  LaunchRule rows{LaunchRule::Kind::SpmmRows, t.blockThreads, t.group, width, t.tileWidth(), 0};
  entries.push_back({base + "_rows", KernelRole::Rows, rows});
  if (t.heavyThreshold > 0) {
    LaunchRule segments{LaunchRule::Kind::SpmmSegments, t.blockThreads, t.segmentGroup, width, t.segmentTileWidth(),
                        t.heavyThreshold};
    LaunchRule combine = segments;
    combine.kind = LaunchRule::Kind::SpmmCombine;
    entries.push_back({base + "_segments", KernelRole::Segments, segments});
    entries.push_back({base + "_combine", KernelRole::Combine, combine});
  }
  return entries;
}

std::string PlanContext::label(const std::string &what) const {
  return fmt::format("{}_{}", passName(plan.pass), what);
}

std::string PlanContext::entryBase(const std::string &label) const {
  return fmt::format("gnnjit_{}_{}", plan.layer, label);
}

int PlanContext::addScratch(const ExprNode &aggregate, int64_t width, bool global) {
  const int index = static_cast<int>(plan.scratch.size());
  plan.scratch.push_back({width, global});
  plan.scratchOf[&aggregate] = index;
  return index;
}

PassPlan startPlan(const LoweredLayer &lowered, Pass pass, const PassConfig &config) {
  PassPlan plan;
  plan.pass = pass;
  plan.layer = lowered.layer.name();
  plan.config = config;
  plan.index = config.index;
  plan.weighted = config.weighted;
  plan.targets = targetsOf(lowered, pass);
  const std::vector<AggregationStage> &stages = stagesOf(lowered, pass);
  if (config.stages.size() != stages.size())
    throwInternalError("layer {}: {} stage configs for the {} stages of the {} pass", plan.layer, config.stages.size(),
                       stages.size(), passName(pass));
  return plan;
}

void planSavedValues(const LoweredLayer &lowered, PassPlan &plan) {
  attentionSaved(lowered, plan);
  for (size_t k : stagesWithSavedArgs(lowered))
    plan.savedArgsOf[lowered.forward[k].aggregate.get()] = savedArgsName(k);
}

void planStages(PlanContext &c) {
  const PassConfig &config = c.plan.config;
  for (size_t k = 0; k < c.stages.size(); ++k) {
    const AggregationStage &stage = c.stages[k];
    const Over over = cast<Aggregate>(stage.aggregate.get())->over();
    if (const auto *attention = std::get_if<AttentionConfig>(&config.stages[k]);
        stage.family == Family::Attention && attention && over != Over::AllNodes) {
      planAttentionStage(c, k, *attention);
    } else if (over == Over::AllNodes) {
      planNodeSum(c, k);
    } else if (over == Over::AllEdges) {
      planEdgeSum(c, k);
    } else if (const auto *spmm = std::get_if<SpmmConfig>(&config.stages[k]); stage.family == Family::SpMM && spmm) {
      planSpmmStage(c, k, *spmm);
    } else if (const auto *reduction = std::get_if<ReductionConfig>(&config.stages[k]);
               stage.family == Family::Reduction && reduction) {
      // A forward max or min whose backward reads its arg positions saves them.
      const auto args = c.plan.savedArgsOf.find(stage.aggregate.get());
      planReductionStage(c, k, *reduction,
                         c.plan.pass == Pass::Forward && args != c.plan.savedArgsOf.end() ? args->second : "");
    } else {
      throwInternalError("layer {}: stage {} of the {} pass ({}) has no config of its family", c.plan.layer, k,
                         passName(c.plan.pass), familyName(stage.family));
    }
  }
}

void listSavedForBackward(PlanContext &c) {
  for (size_t k : stagesWithSavedArgs(c.lowered))
    c.plan.saved.push_back({savedArgsName(k), c.lowered.forward[k].aggregate->shape().size(), false, true, {}});
  listAttentionSaved(c);
}

std::string savedArgsName(size_t k) { return fmt::format("args{}", k); }
std::string savedLseName(size_t k) { return fmt::format("lse{}", k); }
std::string savedValueName(size_t k) { return fmt::format("value{}", k); }

const Target &PassPlan::target(std::string_view name) const {
  for (const Target &t : targets)
    if (t.name == name)
      return t;
  throwInternalError("pass {} has no target '{}'", passName(pass), name);
}

std::string PassPlan::describe() const {
  struct Describe {
    const PassPlan &plan;
    static std::string to(const std::string &target, int aggregate) {
      return target.empty() ? fmt::format("agg{}", aggregate) : target;
    }
    std::string operator()(const SpmmStep &s) const {
      if (s.cusparse())
        return fmt::format("spmm {} [cusparse] -> {}\n", shortText(s.stage), to(s.target, s.aggregate));
      return fmt::format("spmm {} [generated {}] -> {}\n", shortText(s.stage), s.config.print(),
                         to(s.target, s.aggregate));
    }
    std::string operator()(const ReductionStep &s) const {
      return fmt::format("reduction {} [generated {}] -> {}{}\n", shortText(s.stage), s.config.print(),
                         to(s.target, s.aggregate),
                         s.savedArgs.empty() ? "" : fmt::format(", arg positions -> saved {}", s.savedArgs));
    }
    std::string operator()(const ArgScatterStep &s) const {
      return fmt::format("arg scatter {} [by saved {}, fixed-point atomics] -> {}\n", shortText(s.stage), s.savedArgs,
                         to(s.target, s.aggregate));
    }
    std::string operator()(const AttentionStep &s) const {
      if (s.mode == AttentionStep::Mode::HeadSums)
        return fmt::format("attention per-head sums at nodes ({} of {}) [generated {}]\n", s.headSums.size(),
                           shapeText(s.lanes), s.config.print());
      const char *mode = s.mode == AttentionStep::Mode::Softmax ? "online softmax"
                         : s.mode == AttentionStep::Mode::Sum   ? "sum, alpha from the saved log-sum-exp"
                                                                : "sum over edge ranges";
      std::string saves;
      if (!s.savedLse.empty())
        saves = fmt::format(", log-sum-exp -> saved {}", s.savedLse);
      if (!s.savedValue.empty())
        saves += fmt::format(", aggregate -> saved {}", s.savedValue);
      std::string sums, results;
      for (const AttentionOutput &o : s.outputs) {
        sums += fmt::format("{}{}", sums.empty() ? "" : " and ", shortText(o.stage));
        results += fmt::format("{}{}", results.empty() ? "" : ", ", to(o.target, o.aggregate));
      }
      return fmt::format("attention {} [{}; generated {}] -> {}{}\n", sums, mode, s.config.print(), results, saves);
    }
    std::string operator()(const NodeSumStep &s) const {
      return fmt::format("node sum {} -> agg{}\n", shortText(s.stage), s.aggregate);
    }
    std::string operator()(const EdgeSumStep &s) const {
      return fmt::format("edge sum {} -> agg{}\n", shortText(s.stage), s.aggregate);
    }
    std::string operator()(const EdgeOutputsStep &s) const {
      return fmt::format("edge outputs ({})\n", s.kernels.front().entry);
    }
    std::string operator()(const NodeOutputsStep &s) const {
      return fmt::format("{} outputs ({})\n", s.global ? "global" : "node", s.kernels.front().entry);
    }
    std::string operator()(const ZeroStep &s) const { return fmt::format("zero {}\n", s.target); }
  };
  std::string text;
  for (const Step &step : steps)
    text += std::visit(Describe{*this}, step);
  return text;
}

} // namespace gnnjit::lower
