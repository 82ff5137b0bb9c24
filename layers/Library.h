// The standard layer library: the message-passing layers people use, written
// in the DSL, each matching one PyTorch Geometric 2.8 convolution.
//
// What a library layer is, and what it is not: docs/architecture.md keeps dense per-node
// work (Linear layers, biases, root/skip weights, the MLP of GIN) outside the
// DSL, in cuBLAS or the caller's framework. So each layer here is the sparse,
// graph-dependent middle of its PyG class: it takes the already projected
// features as inputs (e.g. GATv2 takes xl = lin_l(x) and xr = lin_r(x)), the
// attention parameters as params, and returns what PyG's propagate() returns
// (reshaped as PyG reshapes it). Each layer's file says exactly which part of
// the PyG class it is, which inputs the caller computes and how, and what the
// caller adds afterwards.
//
// Self loops: GCNConv, GATConv, GATv2Conv and AGNNConv add self loops inside
// their forward(). A DSL layer never changes the graph: build the graph with
// graph::BuildOptions::selfLoops = SelfLoops::AddRemaining (GCN) or Replace
// (GAT, GATv2, AGNN) to get the same edges; see each layer's notes.
//
// Naming of inputs: node inputs read only at edge sources are the x_j of PyG
// (flow source_to_target: edge j -> i carries a message from j to i), node
// inputs read at destinations are the x_i.
#pragma once

#include "dsl/Layer.h"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace gnnjit::layers {

/// Knobs of the library layers. A layer reads the fields its entry names in
/// LayerInfo::options and rejects settings it cannot honour (heads on a layer
/// without heads, an aggregation it does not offer) with a UserError.
struct LayerOptions {
  /// Features per head (PyG's out_channels, C) or, for layers without heads,
  /// the feature width of the inputs.
  int64_t dim = 16;
  /// Attention heads (PyG's heads, H). Only attention layers have heads.
  int64_t heads = 1;
  /// Attention layers: true concatenates heads into [1, H * C] as PyG's
  /// concat=True (out.view(-1, H * C), head-major); false averages them
  /// into [1, C] as concat=False.
  bool concat = true;
  /// LeakyReLU slope of GAT and GATv2 (PyG's negative_slope).
  double negativeSlope = 0.2;
  /// GIN: when trainEps is false, the fixed epsilon (PyG's eps with
  /// train_eps=False); when true, eps is a scalar parameter input "eps".
  double eps = 0.0;
  bool trainEps = true;
  /// Aggregation of layers that offer a choice ("sum", "mean", "max",
  /// "min"); empty takes the layer's default (PyG's default aggr).
  std::string aggregation;
  /// GCN, GraphConv: multiply messages by the graph's static edge weight
  /// (PyG's edge_weight; 1 on unweighted graphs). GCN then normalizes by
  /// weighted degrees, as gcn_norm does.
  bool weighted = false;
  /// GAT, GATv2, Transformer: take projected edge features e = lin_edge(
  /// edge_attr) as an edge input "e" of shape [H, C] (PyG's edge_dim set).
  /// The raw edge_dim stays with the caller's lin_edge, outside the layer.
  bool edgeFeatures = false;
  /// GAT, GATv2, Transformer: dropout of the attention coefficients with
  /// this probability (PyG's dropout, in training), drawn from each call's
  /// seed (LayerRunner::setRandomSeed); 0 for none (inference).
  double attentionDropout = 0.0;
  /// GAT, GIN: the features read at destinations are an input of their own,
  /// "x_dst" (GAT: [H, C], GIN: [1, dim]), and "x" is read at sources only:
  /// a bipartite graph's two node sets (PyG's (x_src, x_dst) pair). Without
  /// it, "x" is read at both ends of each edge.
  bool bipartite = false;
};

/// A field of LayerOptions that a layer may read. A layer refuses a field it
/// does not read when it is set away from its default (say, an aggregation
/// for GCN), so a setting never passes silently unused.
enum class Knob : uint8_t {
  Dim,
  Heads,
  Concat,
  NegativeSlope,
  Eps,
  Aggregation,
  Weighted,
  EdgeFeatures,
  AttentionDropout,
  Bipartite
};
/// The LayerOptions field's name: "dim", "heads", "concat", ...
std::string_view knobName(Knob knob);

/// One entry of the library.
struct LayerInfo {
  std::string name;     ///< what `gnnjit run --layer` takes
  std::string summary;  ///< one line: the formula
  std::string pygClass; ///< the PyG 2.8 class it matches, e.g. "torch_geometric.nn.GATv2Conv"
  /// The kernel family docs/architecture.md's table expects; `gnnjit layers` shows what
  /// the lowering actually classifies (lower/Classify.h), and a test checks
  /// that the two agree.
  std::string familyHint;
  /// The LayerOptions fields this layer reads.
  std::vector<Knob> knobs;
  /// Those fields for people, with their choices, e.g. "dim, aggregation (sum|mean)".
  std::string options;
  /// What the caller computes outside the layer (projections, bias, ...).
  std::string outside;
  std::function<dsl::Layer(const LayerOptions &)> build;
};

/// Every library layer, in a fixed order.
const std::vector<LayerInfo> &library();

/// The names of library(), in order.
std::vector<std::string> layerNames();

/// The entry of that name; a UserError listing the known names otherwise.
const LayerInfo &findLayer(std::string_view name);

/// Whether the layer reads that field (attention layers read heads).
bool takes(const LayerInfo &info, Knob knob);

/// findLayer(name).build(options).
dsl::Layer buildLayer(std::string_view name, const LayerOptions &options = {});

// ---- the layers, one file each (see the file for formula and PyG mapping) ----

dsl::Layer gcn(const LayerOptions &options);         ///< Gcn.cpp: GCNConv
dsl::Layer graphConv(const LayerOptions &options);   ///< GraphConv.cpp: GraphConv
dsl::Layer sage(const LayerOptions &options);        ///< Sage.cpp: SAGEConv
dsl::Layer gin(const LayerOptions &options);         ///< Gin.cpp: GINConv
dsl::Layer gat(const LayerOptions &options);         ///< Gat.cpp: GATConv
dsl::Layer gatv2(const LayerOptions &options);       ///< GatV2.cpp: GATv2Conv
dsl::Layer transformer(const LayerOptions &options); ///< Transformer.cpp: TransformerConv
dsl::Layer agnn(const LayerOptions &options);        ///< Agnn.cpp: AGNNConv
dsl::Layer edgeConv(const LayerOptions &options);    ///< EdgeConv.cpp: EdgeConv with a Linear nn

} // namespace gnnjit::layers
