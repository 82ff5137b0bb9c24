#include "exec/Program.h"

#include "dsl/IRVisitor.h"
#include "dsl/Printer.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace gnnjit::exec {

using namespace gnnjit::dsl;
using llvm::cast;
using llvm::isa;

std::string_view passName(Pass pass) { return pass == Pass::Forward ? "fwd" : "bwd"; }

std::string_view variantName(Variant variant) {
  switch (variant) {
  case Variant::Auto:
    return "auto";
  case Variant::Generated:
    return "generated";
  case Variant::Cusparse:
    return "cusparse";
  }
  return "?";
}

Variant parseVariant(std::string_view text) {
  for (Variant v : {Variant::Auto, Variant::Generated, Variant::Cusparse})
    if (text == variantName(v))
      return v;
  throwUserError("unknown backend variant '{}': expected auto, generated or cusparse", text);
}

namespace {

bool contains(const ExprPtr &root, const ExprNode &node) {
  for (const ExprPtr &n : postOrder({root}))
    if (n.get() == &node)
      return true;
  return false;
}

/// The number of aggregate nodes (of `all`) that `root` reads.
int countAggregates(const ExprPtr &root, const std::vector<lower::AggregationStage> &all) {
  int count = 0;
  for (const lower::AggregationStage &s : all)
    count += contains(root, *s.aggregate) ? 1 : 0;
  return count;
}

std::string shortText(const lower::AggregationStage &s) {
  const auto *agg = cast<Aggregate>(s.aggregate.get());
  return fmt::format("aggregate[{}, {}] {}", reduceName(agg->reduce()), overName(agg->over()),
                     shapeText(s.aggregate->shape()));
}

ExprPtr sumOfTerms(const std::vector<ExprPtr> &terms) {
  ExprPtr sum;
  for (const ExprPtr &t : terms)
    sum = sum ? Binary::make(BinaryOp::Add, sum, t) : t;
  return sum;
}

std::vector<Target> targetsOf(const lower::LoweredLayer &lowered, Pass pass) {
  std::vector<Target> targets;
  if (pass == Pass::Forward) {
    for (const LayerOutput &o : lowered.layer.outputs())
      targets.push_back({o.name, o.value, false, o.value->shape().size()});
    return targets;
  }
  for (const InputGradient &g : lowered.backward.plan.gradients) {
    const InputDecl &in = *g.input;
    if (in.kind == InputKind::Edge && !g.terms.empty())
      throwUserError("layer {}: the gradient of edge input '{}' is not generated yet (no SpMM-family kernel "
                     "writes per-edge values)",
                     lowered.layer.name(), in.name);
    targets.push_back({in.name, sumOfTerms(g.terms), in.kind == InputKind::Param, in.shape.size()});
  }
  return targets;
}

} // namespace

Program planProgram(const lower::LoweredLayer &lowered, Pass pass, const ProgramConfig &config) {
  Program program;
  program.pass = pass;
  program.targets = targetsOf(lowered, pass);
  const std::vector<lower::AggregationStage> &stages =
      pass == Pass::Forward ? lowered.forward : lowered.backward.stages;
  const std::string &layer = lowered.layer.name();

  for (const lower::AggregationStage &s : stages) {
    const auto *agg = cast<Aggregate>(s.aggregate.get());
    const bool spmm = s.family == lower::Family::SpMM;
    const bool nodeSum = agg->over() == Over::AllNodes && agg->reduce() == Reduce::Sum;
    if (!spmm && !nodeSum)
      throwUserError("layer {}: kernels of the {} family ({}) are not generated yet; run it with --backend cpu. "
                     "The {} aggregation:\n{}",
                     layer, lower::familyName(s.family), s.reason, pass == Pass::Forward ? "forward" : "backward",
                     printExpr(s.aggregate));
  }

  for (const Target &t : program.targets)
    if (t.value)
      for (const ExprPtr &n : postOrder({t.value}))
        if (isa<Saved>(n.get()) || isa<EdgeSoftmax>(n.get()))
          throwUserError("layer {}: the {} pass reads {} (saved forward values or softmax); only SpMM-family "
                         "layers are generated yet",
                         layer, pass == Pass::Forward ? "forward" : "backward", printExpr(n));
  std::vector<bool> done(program.targets.size(), false);
  auto generatedName = [&](const std::string &what) { return fmt::format("{}_{}", passName(pass), what); };
  for (size_t k = 0; k < stages.size(); ++k) {
    const lower::AggregationStage &s = stages[k];
    const auto *agg = cast<Aggregate>(s.aggregate.get());
    Step step;
    step.stage = s;
    step.width = s.aggregate->shape().size();
    if (agg->over() == Over::AllNodes) {
      step.kind = Step::Kind::NodeSum;
      step.aggregate = static_cast<int>(program.aggregateWidths.size());
      program.aggregateWidths.push_back(s.aggregate->shape().size());
      program.aggregateGlobal.push_back(true);
      program.steps.push_back(std::move(step));
      continue;
    }
    // The one target this aggregate could be fused into: it must be the
    // aggregate's only reader (another aggregation reading it needs a buffer).
    int user = -1, users = 0;
    for (size_t t = 0; t < program.targets.size(); ++t)
      if (program.targets[t].value && contains(program.targets[t].value, *s.aggregate))
        user = static_cast<int>(t), ++users;
    bool readByAggregation = false;
    for (size_t other = 0; other < stages.size(); ++other)
      readByAggregation |=
          other != k && contains(cast<Aggregate>(stages[other].aggregate.get())->message(), *s.aggregate);
    const bool fusable = users == 1 && !readByAggregation && !program.targets[user].global &&
                         countAggregates(program.targets[user].value, stages) == 1 &&
                         codegen::isElementwiseIn(program.targets[user].value, *s.aggregate);
    const bool cusparsePossible = s.scalarWeight && lower::isPlainGather(s);
    const bool direct = fusable && program.targets[user].value.get() == s.aggregate.get();
    const SpmmChoice choice = config.chooseSpmm(s, cusparsePossible, fusable && !direct);
    if (choice.cusparse && !cusparsePossible)
      throwInternalError("cuSPARSE chosen for a stage it cannot run");

    codegen::SpmmKernelSpec spec;
    spec.layer = layer;
    spec.label = generatedName(fmt::format("agg{}", k));
    spec.stage = s;
    spec.index = config.index;
    spec.weighted = config.weighted;
    spec.tuning = choice.tuning;
    if (choice.cusparse) {
      step.kind = Step::Kind::Cusparse;
      step.gathered = cast<InputRef>(s.value.get())->input()->name;
      step.module = static_cast<int>(program.modules.size());
      program.modules.push_back(codegen::generateSpmmValuesKernel(spec));
    } else {
      step.kind = Step::Kind::Spmm;
      step.tuning = choice.tuning;
      if (fusable) {
        spec.fusedOutput = program.targets[user].value;
        spec.outputName = program.targets[user].name;
      }
    }
    if ((choice.cusparse && direct) || (!choice.cusparse && fusable)) {
      step.target = program.targets[user].name;
      done[user] = true;
    } else {
      step.aggregate = static_cast<int>(program.aggregateWidths.size());
      program.aggregateWidths.push_back(s.aggregate->shape().size());
      program.aggregateGlobal.push_back(false);
      spec.aggregateIndex = step.aggregate;
    }
    if (!choice.cusparse) {
      step.module = static_cast<int>(program.modules.size());
      program.modules.push_back(codegen::generateSpmmKernel(spec));
    }
    program.steps.push_back(std::move(step));
  }

  std::map<const ExprNode *, int> buffers;
  for (const Step &step : program.steps)
    if (step.aggregate >= 0)
      buffers[step.stage.aggregate.get()] = step.aggregate;
  // NodeSum kernels now that every buffer index is known.
  for (Step &step : program.steps)
    if (step.kind == Step::Kind::NodeSum) {
      codegen::NodeSumSpec spec{layer, generatedName(fmt::format("sum{}", step.aggregate)), step.stage.aggregate,
                                step.aggregate, buffers};
      step.module = static_cast<int>(program.modules.size());
      program.modules.push_back(codegen::generateNodeSumKernel(spec));
    }

  for (bool global : {false, true}) {
    codegen::NodeKernelSpec spec;
    spec.layer = layer;
    spec.label = generatedName(global ? "global" : "nodes");
    spec.aggregateBuffers = buffers;
    spec.global = global;
    for (size_t t = 0; t < program.targets.size(); ++t) {
      const Target &target = program.targets[t];
      if (done[t] || target.global != global)
        continue;
      done[t] = true;
      if (!target.value) {
        Step zero;
        zero.kind = Step::Kind::Zero;
        zero.target = target.name;
        program.steps.push_back(std::move(zero));
        continue;
      }
      spec.outputs.push_back({target.name, target.value});
    }
    if (spec.outputs.empty())
      continue;
    Step step;
    step.kind = global ? Step::Kind::GlobalOutputs : Step::Kind::NodeOutputs;
    for (const codegen::NodeOutput &o : spec.outputs)
      step.width = std::max(step.width, o.value->shape().size());
    step.module = static_cast<int>(program.modules.size());
    program.modules.push_back(codegen::generateNodeKernel(spec));
    program.steps.push_back(std::move(step));
  }
  return program;
}

std::string Program::describe() const {
  std::string s;
  for (const Step &step : steps) {
    switch (step.kind) {
    case Step::Kind::Spmm:
      s += fmt::format("spmm {} [generated {}] -> {}\n", shortText(step.stage), step.tuning.print(),
                       step.target.empty() ? fmt::format("agg{}", step.aggregate) : step.target);
      break;
    case Step::Kind::Cusparse:
      s += fmt::format("spmm {} [cusparse] -> {}\n", shortText(step.stage),
                       step.target.empty() ? fmt::format("agg{}", step.aggregate) : step.target);
      break;
    case Step::Kind::NodeSum:
      s += fmt::format("node sum {} -> agg{}\n", shortText(step.stage), step.aggregate);
      break;
    case Step::Kind::NodeOutputs:
    case Step::Kind::GlobalOutputs:
      s += fmt::format("{} outputs ({})\n", step.kind == Step::Kind::NodeOutputs ? "node" : "global",
                       modules[static_cast<size_t>(step.module)].kernels.front().entry);
      break;
    case Step::Kind::Zero:
      s += fmt::format("zero {}\n", step.target);
      break;
    }
  }
  return s;
}

} // namespace gnnjit::exec
