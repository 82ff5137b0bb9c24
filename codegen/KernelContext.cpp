#include "codegen/KernelContext.h"

#include "codegen/EmitExpr.h"
#include "dsl/AttentionDropout.h"
#include "support/Error.h"

#include <fmt/format.h>

namespace gnnjit::codegen {

using namespace gnnjit::dsl;

std::string inputParamName(const std::string &input) { return "in_" + input; }
std::string inputStrideName(const std::string &input) { return "in_" + input + "_ld"; }
std::string outputParamName(const std::string &output) { return "out_" + output; }
std::string outputStrideName(const std::string &output) { return "out_" + output + "_ld"; }
std::string aggregateParamName(int index) { return fmt::format("agg{}", index); }
std::string aggregateStrideName(int index) { return fmt::format("agg{}_ld", index); }
std::string savedParamName(const std::string &saved) { return "saved_" + saved; }
std::string savedStrideName(const std::string &saved) { return "saved_" + saved + "_ld"; }

namespace {

const std::string &nodeAt(const LeafPlaces &places, Level level) {
  const std::string &node = level == Level::Src ? places.srcNode : places.dstNode;
  if (node.empty())
    throwInternalError("a kernel reads a {} value where it has no {} node", levelName(level), levelName(level));
  return node;
}

/// The dropout factor of this edge's head `h`: from the call's seed and the
/// edge's id (edge_ids maps a position of either CSR to it, so the forward's
/// edge loop and the backward's transposed one draw alike).
std::string attentionDropoutFactor(ParamList &params, const LeafPlaces &places, const GraphValue &g,
                                   const std::string &h) {
  if (places.position.empty())
    throwInternalError("an attention dropout factor read outside an edge loop");
  const std::string ids = params.use(ParamKind::EdgeIds, "", "edge_ids", "const index_t* __restrict__");
  const std::string seed = params.use(ParamKind::RandomSeed, "", "random_seed", "unsigned long long");
  return fmt::format("gnnjit::device::dropoutFactor({}, (long long){}[{}], {}, {}, {}u, {})", seed, ids,
                     places.position, g.shape().heads, h, dsl::dropoutThreshold(g.probability()),
                     floatLiteral(1.0 / (1.0 - g.probability())));
}

} // namespace

ExprEmitContext kernelContext(ParamList &params, const LeafPlaces &places) {
  ExprEmitContext ctx;
  ctx.readInput = [&params, &places](const InputDecl &in, Level at, const ElementIndex &element) {
    const std::string offset = element.flat();
    const std::string data =
        params.use(ParamKind::InputData, in.name, inputParamName(in.name), "const float* __restrict__");
    if (at == Level::Global)
      return fmt::format("{}[{}]", data, offset);
    if (at == Level::Edge) {
      if (places.position.empty())
        throwInternalError("edge input {} read outside an edge loop", in.name);
      const std::string ids = params.use(ParamKind::EdgeIds, "", "edge_ids", "const index_t* __restrict__");
      const std::string ld = params.use(ParamKind::InputStride, in.name, inputStrideName(in.name), "long long");
      return fmt::format("{}[(long long){}[{}] * {} + ({})]", data, ids, places.position, ld, offset);
    }
    const std::string ld = params.use(ParamKind::InputStride, in.name, inputStrideName(in.name), "long long");
    return fmt::format("{}[(long long)({}) * {} + ({})]", data, nodeAt(places, at), ld, offset);
  };
  ctx.graphValue = [&params, &places](const GraphValue &g, const std::string &h) -> std::string {
    const GraphQuantity q = g.quantity();
    const Level at = g.level();
    if (q == GraphQuantity::AttentionDropout)
      return attentionDropoutFactor(params, places, g, h);
    if (q == GraphQuantity::EdgeWeight) {
      if (!places.weighted)
        return "1.0f";
      if (places.position.empty())
        throwInternalError("an edge weight read outside an edge loop");
      return fmt::format("{}[{}]", params.use(ParamKind::CsrWeights, "", "csr_weights", "const float* __restrict__"),
                         places.position);
    }
    const std::string name(graphQuantityName(q));
    return fmt::format("{}[{}]", params.use(ParamKind::NodeQuantity, name, "q_" + name, "const float* __restrict__"),
                       nodeAt(places, at));
  };
  ctx.readComputed = [&params, &places](const ExprNode &n, const std::string &offset) -> std::string {
    if (auto it = places.inVariables.find(&n); it != places.inVariables.end())
      return it->second;
    if (const auto *saved = llvm::dyn_cast<Saved>(&n); saved && saved->what() == SavedKind::ArgMatch) {
      const auto it = places.savedArgs.find(saved->forward().get());
      if (it == places.savedArgs.end() || places.position.empty())
        return {};
      const std::string incoming =
          places.transposed ? fmt::format("{}[{}]",
                                          params.use(ParamKind::PeerPositions, "", "peer_positions",
                                                     "const index_t* __restrict__"),
                                          places.position)
                            : places.position;
      // 1 where this edge is the one the max/min took element `offset` from,
      // at the aggregation's group: the destination for in-edges.
      const auto *agg = llvm::cast<Aggregate>(saved->forward().get());
      const Level group = agg->over() == Over::OutEdges ? Level::Src : Level::Dst;
      const std::string data = params.use(ParamKind::SavedData, it->second, savedParamName(it->second),
                                          "const index_t* __restrict__");
      const std::string ld =
          params.use(ParamKind::SavedStride, it->second, savedStrideName(it->second), "long long");
      return fmt::format("({}[(long long)({}) * {} + ({})] == ({}) ? 1.0f : 0.0f)", data, nodeAt(places, group), ld,
                         offset, incoming);
    }
    if (const auto *saved = llvm::dyn_cast<Saved>(&n); saved && saved->what() == SavedKind::Value) {
      const auto it = places.savedValues.find(saved->forward().get());
      if (it == places.savedValues.end())
        return {};
      const std::string data =
          params.use(ParamKind::SavedData, it->second, savedParamName(it->second), "const float* __restrict__");
      const std::string ld = params.use(ParamKind::SavedStride, it->second, savedStrideName(it->second), "long long");
      return fmt::format("{}[(long long)({}) * {} + ({})]", data, nodeAt(places, n.level()), ld, offset);
    }
    if (auto it = places.inBuffers.find(&n); it != places.inBuffers.end()) {
      const std::string data = params.useScratch(ParamKind::AggregateData, it->second,
                                                 aggregateParamName(it->second), "const float* __restrict__");
      const std::string ld = params.useScratch(ParamKind::AggregateStride, it->second,
                                               aggregateStrideName(it->second), "long long");
      // A per-node value other than an aggregate (a precomputed per-head
      // sum) is read at its own end of the edge.
      const bool atNode = !llvm::isa<Aggregate>(&n) && (n.level() == Level::Src || n.level() == Level::Dst);
      return fmt::format("{}[(long long)({}) * {} + ({})]", data, atNode ? nodeAt(places, n.level()) : places.bufferRow,
                         ld, offset);
    }
    return {};
  };
  ctx.computedSum = ctx.readComputed; // variables and buffers alike
  ctx.softmaxLse = [&params, &places](const Saved &alpha, const std::string &h) -> std::string {
    const auto it = places.savedLse.find(alpha.forward().get());
    if (it == places.savedLse.end())
      return {};
    const std::string data =
        params.use(ParamKind::SavedData, it->second, savedParamName(it->second), "const float* __restrict__");
    const std::string ld = params.use(ParamKind::SavedStride, it->second, savedStrideName(it->second), "long long");
    return fmt::format("{}[(long long)({}) * {} + ({})]", data, nodeAt(places, Level::Dst), ld, h);
  };
  return ctx;
}

} // namespace gnnjit::codegen
