#include "cli/RunReport.h"

#include "runtime/Device.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gnnjit::cli {

namespace {

std::string indentLines(const std::string &label, const std::string &text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    out += (out.empty() ? label : std::string(label.size(), ' ')) + text.substr(start, end - start) + "\n";
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  return out;
}

nlohmann::ordered_json checksumJson(const std::string &key, const NamedChecksum &c) {
  return {{key, c.name},         {"rows", c.rows},          {"cols", c.cols},
          {"sum", c.sum.sum},    {"sum_sq", c.sum.sumSq},   {"max_abs", c.sum.maxAbs},
          {"non_finite", c.sum.nonFinite}};
}

void printChecksumRow(std::string_view label, const NamedChecksum &c) {
  fmt::print("{:<8} {:<10} [{} x {}]  sum {:.12g}  sum_sq {:.12g}  max_abs {:.12g}{}\n", label, c.name, c.rows, c.cols,
             c.sum.sum, c.sum.sumSq, c.sum.maxAbs,
             c.sum.nonFinite ? fmt::format("  NON-FINITE {}", c.sum.nonFinite) : "");
}

} // namespace

bool checksPass(const RunResult &r) {
  for (const CheckRow &row : r.checks)
    if (!(row.agreement.worst <= kCheckTolerance))
      return false;
  return true;
}

void printRunJson(const RunResult &r) {
  const layers::LayerOptions &o = r.options;
  nlohmann::ordered_json j = {
      {"layer", r.info->name},
      {"layer_hash", r.layerHash},
      {"pyg_class", r.info->pygClass},
      {"backend", r.gpu ? "cuda" : "cpu"},
      {"variant", r.variant},
      {"graph", {{"name", r.graphName}, {"nodes", r.nodes}, {"edges", r.edges}}},
      {"options",
       {{"dim", o.dim},
        {"heads", o.heads},
        {"concat", o.concat},
        {"aggregation", o.aggregation},
        {"weighted", o.weighted},
        {"edge_features", o.edgeFeatures},
        {"attention_dropout", o.attentionDropout},
        {"bipartite", o.bipartite}}},
      {"seed", r.seed},
      {"inputs_from", r.inputsDir.empty() ? std::string("random") : r.inputsDir},
  };
  nlohmann::ordered_json outs = nlohmann::ordered_json::array(), grads = nlohmann::ordered_json::array();
  for (const NamedChecksum &c : r.outputs)
    outs.push_back(checksumJson("name", c));
  j["outputs"] = outs;
  if (r.backward) {
    for (const NamedChecksum &c : r.gradients)
      grads.push_back(checksumJson("input", c));
    j["gradients"] = grads;
  }
  nlohmann::ordered_json timing = {{"graph_load", r.graphMs}, {"lower", r.lowerMs}, {"forward", r.forwardMs}};
  if (r.backward)
    timing["backward"] = r.backwardMs;
  j["memory_estimate_bytes"] = {{"host", r.estimate.host.total()}, {"device", r.estimate.device.total()}};
  if (r.gpu) {
    timing["compile"] = r.gpu->compileMs;
    timing["reps"] = r.reps;
    if (r.check) {
      timing["reference_forward"] = r.referenceForwardMs;
      if (r.backward)
        timing["reference_backward"] = r.referenceBackwardMs;
    }
    j["kernels"] = {{"modules", r.gpu->modules},
                    {"compiled", r.gpu->compiled},
                    {"cache_hits", r.gpu->cacheHits},
                    {"forward", r.gpu->forwardPlan},
                    {"backward", r.gpu->backwardPlan},
                    {"tuned_stages", r.gpu->tunedStages},
                    {"tuning_records_ms", r.gpu->tuningRecordsMs}};
    if (r.gpu->tuneSeconds >= 0)
      j["kernels"]["tuned_now_seconds"] = r.gpu->tuneSeconds;
    if (!r.gpu->recordsNote.empty())
      j["kernels"]["tuning_records"] = r.gpu->recordsNote;
    j["device_memory_bytes"] = {
        {"peak", r.gpu->peakBytes}, {"graph", r.gpu->graphBytes}, {"inputs", r.gpu->inputBytes}};
  }
  if (r.compiled)
    j["compile_only"] = {{"modules", r.compiled->modules},
                         {"compiled", r.compiled->compiled},
                         {"ms", r.compiled->ms},
                         {"refused", r.compiled->refused}};
  if (!r.checks.empty()) {
    nlohmann::ordered_json c = nlohmann::ordered_json::array();
    for (const CheckRow &row : r.checks)
      c.push_back({{"what", row.what},
                   {"name", row.name},
                   {"worst_scaled_error", row.agreement.worst},
                   {"pass", row.agreement.worst <= kCheckTolerance}});
    j["check"] = c;
  }
  j["timing_ms"] = timing;
  fmt::print("{}\n", j.dump(2));
}

void printRunText(const RunResult &r) {
  fmt::print("layer    {} ({}), hash {}\n", r.info->name, r.info->pygClass, r.layerHash);
  fmt::print("{}", r.layerIr);
  fmt::print("graph    {}: {} nodes, {} edges\n", r.graphName, r.nodes, r.edges);
  if (r.gpu) {
    const GpuStats &g = *r.gpu;
    fmt::print("backend  cuda ({} kernel module{}: {} compiled, {} from the cache, {:.1f} ms)\n", g.modules,
               g.modules == 1 ? "" : "s", g.compiled, g.cacheHits, g.compileMs);
    if (g.tuneSeconds >= 0)
      fmt::print("tuned    this layer on this graph first (--tune), in {:.2f} s; records appended\n", g.tuneSeconds);
    if (g.tunedStages > 0)
      fmt::print("tuned    {} stage{} planned with configs from tuning records (gnnjit tune; found in {:.1f} ms)\n",
                 g.tunedStages, g.tunedStages == 1 ? "" : "s", g.tuningRecordsMs);
    if (!g.recordsNote.empty())
      fmt::print("tuned    {}\n", g.recordsNote);
    fmt::print("{}", indentLines("forward  ", g.forwardPlan));
    if (r.backward)
      fmt::print("{}", indentLines("backward ", g.backwardPlan));
    fmt::print("memory   peak {:.1f} MiB of device memory (graph arrays {:.1f} MiB, inputs {:.1f} MiB; the preflight "
               "estimated {:.1f} MiB)\n",
               g.peakBytes / 1048576.0, g.graphBytes / 1048576.0, g.inputBytes / 1048576.0,
               r.estimate.device.total() / 1048576.0);
  } else if (r.compiled && r.compiled->refused.empty()) {
    fmt::print("backend  cpu (double-precision reference executor): no GPU here; {} kernel module{} generated for {} "
               "({} compiled by NVRTC, {} from the kernel cache, {:.1f} ms), not run\n",
               r.compiled->modules, r.compiled->modules == 1 ? "" : "s", runtime::targetArch(), r.compiled->compiled,
               r.compiled->modules - r.compiled->compiled, r.compiled->ms);
  } else if (r.compiled) {
    fmt::print("{}", indentLines("backend  ", "cpu (double-precision reference executor): no GPU here, and no "
                                              "kernels: " +
                                                  r.compiled->refused));
  } else {
    fmt::print("backend  cpu (double-precision reference executor)\n");
  }
  fmt::print("inputs   {}\n", !r.inputsDir.empty()
                                  ? "from " + r.inputsDir
                                  : fmt::format("random in (-1, 1] (cuRAND Philox), seed {}", r.seed));
  for (const NamedChecksum &c : r.outputs)
    printChecksumRow("output", c);
  for (const NamedChecksum &c : r.gradients)
    printChecksumRow("grad", c);
  fmt::print("time     graph {:.3f} ms, lower {:.3f} ms, forward {:.3f} ms", r.graphMs, r.lowerMs, r.forwardMs);
  if (r.backward)
    fmt::print(", backward {:.3f} ms", r.backwardMs);
  fmt::print("{}\n", r.gpu ? fmt::format(" (median of {} on the GPU)", r.reps) : std::string());
  if (r.check && !r.gpu)
    fmt::print("check    nothing to compare: the reference executor is the backend here\n");
  for (const CheckRow &row : r.checks) {
    const bool ok = row.agreement.worst <= kCheckTolerance;
    fmt::print("check    {:<6} {:<10} worst scaled error {:.3g} vs the fp64 reference{}\n", row.what, row.name,
               row.agreement.worst,
               ok ? ""
                  : fmt::format("  FAIL at [{}, {}]: {} vs {}", row.agreement.row, row.agreement.col,
                                row.agreement.actual, row.agreement.expected));
  }
}

} // namespace gnnjit::cli
