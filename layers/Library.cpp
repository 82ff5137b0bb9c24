#include "layers/Library.h"

#include "support/Error.h"

#include <fmt/format.h>

#include <algorithm>

namespace gnnjit::layers {

std::string_view knobName(Knob knob) {
  switch (knob) {
  case Knob::Dim:
    return "dim";
  case Knob::Heads:
    return "heads";
  case Knob::Concat:
    return "concat";
  case Knob::NegativeSlope:
    return "negativeSlope";
  case Knob::Eps:
    return "eps";
  case Knob::Aggregation:
    return "aggregation";
  case Knob::Weighted:
    return "weighted";
  case Knob::EdgeFeatures:
    return "edgeFeatures";
  case Knob::AttentionDropout:
    return "attentionDropout";
  case Knob::Bipartite:
    return "bipartite";
  }
  return "?";
}

const std::vector<LayerInfo> &library() {
  static const std::vector<LayerInfo> entries = {
      {.name = "gcn",
       .summary = "out_i = sum_j d_j^-1/2 w_ji d_i^-1/2 x_j, d = (weighted) in-degree, d^-1/2 = 0 where d = 0",
       .pygClass = "torch_geometric.nn.GCNConv",
       .familyHint = "spmm",
       .knobs = {Knob::Dim, Knob::Weighted},
       .options = "dim, weighted",
       .outside = "x = lin(x) before; + bias after; self loops: build with --self-loops add-remaining",
       .build = gcn},
      {.name = "graphconv",
       .summary = "out_i = sum_j w_ji x_j (or mean)",
       .pygClass = "torch_geometric.nn.GraphConv",
       .familyHint = "spmm",
       .knobs = {Knob::Dim, Knob::Aggregation, Knob::Weighted},
       .options = "dim, aggregation (sum|mean), weighted",
       .outside = "after: lin_rel(out) + lin_root(x)",
       .build = graphConv},
      {.name = "sage",
       .summary = "out_i = mean_j x_j (or max, min, sum)",
       .pygClass = "torch_geometric.nn.SAGEConv",
       .familyHint = "spmm (mean, sum) / reduction (max, min)",
       .knobs = {Knob::Dim, Knob::Aggregation},
       .options = "dim, aggregation (mean|max|min|sum)",
       .outside = "after: lin_l(out) + lin_r(x)",
       .build = sage},
      {.name = "gin",
       .summary = "out_i = sum_j x_j + (1 + eps) x_i",
       .pygClass = "torch_geometric.nn.GINConv",
       .familyHint = "spmm",
       .knobs = {Knob::Dim, Knob::Eps, Knob::Bipartite},
       .options = "dim, trainEps, eps, bipartite",
       .outside = "after: nn(out)",
       .build = gin},
      {.name = "gat",
       .summary = "out_i = ||_h sum_j softmax_j(leaky_relu(<x_j, att_src> + <x_i, att_dst>)) x_j",
       .pygClass = "torch_geometric.nn.GATConv",
       .familyHint = "attention",
       .knobs = {Knob::Dim, Knob::Heads, Knob::Concat, Knob::NegativeSlope, Knob::EdgeFeatures,
                 Knob::AttentionDropout, Knob::Bipartite},
       .options = "dim, heads, concat, negativeSlope, edgeFeatures, attentionDropout, bipartite",
       .outside = "x = lin(x).view(-1, H, C) before; + bias after; self loops: build with --self-loops replace "
                  "(PyG removes and re-adds them; add is the same on graphs without loops)",
       .build = gat},
      {.name = "gatv2",
       .summary = "out_i = ||_h sum_j softmax_j(<att, leaky_relu(xl_j + xr_i)>) xl_j",
       .pygClass = "torch_geometric.nn.GATv2Conv",
       .familyHint = "attention",
       .knobs = {Knob::Dim, Knob::Heads, Knob::Concat, Knob::NegativeSlope, Knob::EdgeFeatures,
                 Knob::AttentionDropout},
       .options = "dim, heads, concat, negativeSlope, edgeFeatures, attentionDropout",
       .outside = "xl = lin_l(x) (source side), xr = lin_r(x) (destination side) before; + bias after; self "
                  "loops: build with --self-loops replace (PyG removes and re-adds them; add is the same on graphs "
                  "without loops)",
       .build = gatv2},
      {.name = "transformer",
       .summary = "out_i = ||_h sum_j softmax_j(<q_i, k_j + e_ji> / sqrt(C)) (v_j + e_ji)",
       .pygClass = "torch_geometric.nn.TransformerConv",
       .familyHint = "attention",
       .knobs = {Knob::Dim, Knob::Heads, Knob::Concat, Knob::EdgeFeatures, Knob::AttentionDropout},
       .options = "dim, heads, concat, edgeFeatures, attentionDropout",
       .outside = "q, k, v (and e) projections before; + lin_skip(x) (root weight, beta gate) after",
       .build = transformer},
      {.name = "agnn",
       .summary = "out_i = sum_j softmax_j(beta cos(x_i, x_j)) x_j",
       .pygClass = "torch_geometric.nn.AGNNConv",
       .familyHint = "attention",
       .knobs = {Knob::Dim},
       .options = "dim",
       .outside = "nothing (AGNNConv has no projection); self loops: build with --self-loops replace (PyG "
                  "removes and re-adds them; add is the same on graphs without loops)",
       .build = agnn},
      {.name = "edgeconv",
       .summary = "out_i = max_j (a_i + b_j); Linear nn [W1 | W2] + c: a = x (W1 - W2)^T + c, b = x W2^T",
       .pygClass = "torch_geometric.nn.EdgeConv",
       .familyHint = "reduction (max, min) / spmm-like (sum, mean)",
       .knobs = {Knob::Dim, Knob::Aggregation},
       .options = "dim, aggregation (max|min|mean|sum)",
       .outside = "a and b from the Linear's split weight before; nothing after",
       .build = edgeConv},
  };
  return entries;
}

std::vector<std::string> layerNames() {
  std::vector<std::string> names;
  for (const LayerInfo &info : library())
    names.push_back(info.name);
  return names;
}

const LayerInfo &findLayer(std::string_view name) {
  for (const LayerInfo &info : library())
    if (info.name == name)
      return info;
  throwUserError("no library layer is named '{}'; the known layers are: {} (`gnnjit layers` describes them)", name,
                 fmt::join(layerNames(), ", "));
}

bool takes(const LayerInfo &info, Knob knob) {
  return std::find(info.knobs.begin(), info.knobs.end(), knob) != info.knobs.end();
}

dsl::Layer buildLayer(std::string_view name, const LayerOptions &options) { return findLayer(name).build(options); }

} // namespace gnnjit::layers
