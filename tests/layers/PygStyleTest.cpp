// Each library layer against an independent edge-list implementation
// written from the PyG 2.8 sources (gcn_norm, the convs' message()
// functions, torch_geometric.utils.softmax, scatter with empty groups = 0),
// in double precision. PyG itself is checked on the GPU machine by
// bench/python/check_pyg.py; this test keeps the same semantics checked in CI.
#include "LayerTestSupport.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

using namespace gnnjit;
using gnnjit::test::LayerCase;

namespace {

/// The graph as PyG sees it: edge_index columns in edge-id order.
struct Edges {
  int64_t numNodes = 0;
  std::vector<int64_t> src, dst;
  std::vector<double> weight; ///< 1 when unweighted
};

Edges edgesOf(const graph::Graph &g) {
  Edges e;
  e.numNodes = g.numNodes();
  const int64_t m = g.numEdges();
  e.src.assign(static_cast<size_t>(m), 0);
  e.dst.assign(static_cast<size_t>(m), 0);
  e.weight.assign(static_cast<size_t>(m), 1.0);
  const graph::Csr &in = g.incoming();
  for (int64_t i = 0; i < g.numNodes(); ++i)
    for (int64_t p = in.rowBegin(i); p < in.rowEnd(i); ++p) {
      const auto id = static_cast<size_t>(in.edgeId(p));
      e.src[id] = in.index(p);
      e.dst[id] = i;
      if (in.hasWeights())
        e.weight[id] = in.weights()[static_cast<size_t>(p)];
    }
  return e;
}

double leaky(double z, double slope) { return z > 0 ? z : slope * z; }

/// torch_geometric.utils.softmax over edges grouped by destination, per head.
std::vector<double> softmax(const Edges &e, const std::vector<double> &score, int64_t heads) {
  const size_t m = e.src.size();
  std::vector<double> mx(static_cast<size_t>(e.numNodes * heads), -std::numeric_limits<double>::infinity());
  for (size_t k = 0; k < m; ++k)
    for (int64_t h = 0; h < heads; ++h)
      mx[e.dst[k] * heads + h] = std::max(mx[e.dst[k] * heads + h], score[k * heads + h]);
  std::vector<double> ex(score.size()), den(mx.size(), 0.0);
  for (size_t k = 0; k < m; ++k)
    for (int64_t h = 0; h < heads; ++h) {
      ex[k * heads + h] = std::exp(score[k * heads + h] - mx[e.dst[k] * heads + h]);
      den[e.dst[k] * heads + h] += ex[k * heads + h];
    }
  for (size_t k = 0; k < m; ++k)
    for (int64_t h = 0; h < heads; ++h)
      ex[k * heads + h] /= den[e.dst[k] * heads + h];
  return ex;
}

/// scatter(msg, dst, reduce) with 0 for nodes without in-edges.
ref::Tensor scatter(const Edges &e, const std::vector<std::vector<double>> &msg, int64_t cols, const std::string &reduce) {
  ref::Tensor out(e.numNodes, cols);
  std::vector<int64_t> count(static_cast<size_t>(e.numNodes), 0);
  for (size_t k = 0; k < e.src.size(); ++k) {
    const int64_t i = e.dst[k];
    for (int64_t c = 0; c < cols; ++c) {
      double &o = out.at(i, c);
      const double v = msg[k][static_cast<size_t>(c)];
      if (reduce == "max")
        o = count[i] == 0 ? v : std::max(o, v);
      else if (reduce == "min")
        o = count[i] == 0 ? v : std::min(o, v);
      else
        o += v;
    }
    ++count[i];
  }
  if (reduce == "mean")
    for (int64_t i = 0; i < e.numNodes; ++i)
      for (int64_t c = 0; c < cols; ++c)
        if (count[i] > 0)
          out.at(i, c) /= static_cast<double>(count[i]);
  return out;
}

/// out.view(-1, H * C) or out.mean(dim=1).
ref::Tensor heads(const ref::Tensor &perHead, int64_t H, int64_t C, bool concat) {
  if (concat || H == 1)
    return perHead;
  ref::Tensor out(perHead.rows, C);
  for (int64_t i = 0; i < perHead.rows; ++i)
    for (int64_t c = 0; c < C; ++c) {
      double s = 0;
      for (int64_t h = 0; h < H; ++h)
        s += perHead.at(i, h * C + c);
      out.at(i, c) = s / static_cast<double>(H);
    }
  return out;
}

ref::Tensor pygStyle(const LayerCase &lc, const Edges &e, const ref::TensorMap &in) {
  const layers::LayerOptions &o = lc.options;
  const int64_t n = e.numNodes, H = o.heads, C = o.dim, HC = H * C;
  const size_t m = e.src.size();
  std::vector<std::vector<double>> msg(m, std::vector<double>(static_cast<size_t>(HC), 0.0));
  const std::string &name = lc.layer;

  if (name == "gcn") { // gcn_norm + message edge_weight * x_j
    const ref::Tensor &x = in.at("x");
    std::vector<double> deg(static_cast<size_t>(n), 0.0);
    for (size_t k = 0; k < m; ++k)
      deg[e.dst[k]] += o.weighted ? e.weight[k] : 1.0;
    std::vector<double> dis(deg.size());
    for (size_t i = 0; i < deg.size(); ++i) {
      dis[i] = std::pow(deg[i], -0.5);
      if (std::isinf(dis[i]))
        dis[i] = 0; // masked_fill_(inf, 0)
    }
    for (size_t k = 0; k < m; ++k) {
      const double w = dis[e.src[k]] * (o.weighted ? e.weight[k] : 1.0) * dis[e.dst[k]];
      for (int64_t c = 0; c < C; ++c)
        msg[k][c] = w * x.at(e.src[k], c);
    }
    return scatter(e, msg, C, "sum");
  }
  if (name == "graphconv" || name == "sage" || name == "gin") {
    const ref::Tensor &x = in.at("x");
    for (size_t k = 0; k < m; ++k)
      for (int64_t c = 0; c < C; ++c)
        msg[k][c] = (name == "graphconv" && o.weighted ? e.weight[k] : 1.0) * x.at(e.src[k], c);
    std::string reduce = o.aggregation;
    if (reduce.empty())
      reduce = name == "sage" ? "mean" : "sum";
    ref::Tensor out = scatter(e, msg, C, reduce);
    if (name == "gin") {
      const double eps = o.trainEps ? in.at("eps").at(0, 0) : o.eps;
      const ref::Tensor &root = o.bipartite ? in.at("x_dst") : x; // PyG's x[1]
      for (int64_t i = 0; i < n; ++i)
        for (int64_t c = 0; c < C; ++c)
          out.at(i, c) = out.at(i, c) + (1 + eps) * root.at(i, c);
    }
    return out;
  }
  if (name == "edgeconv") { // nn(cat[x_i, x_j - x_i]) = a_i + b_j
    const ref::Tensor &a = in.at("a"), &b = in.at("b");
    for (size_t k = 0; k < m; ++k)
      for (int64_t c = 0; c < C; ++c)
        msg[k][c] = a.at(e.dst[k], c) + b.at(e.src[k], c);
    return scatter(e, msg, C, o.aggregation.empty() ? "max" : o.aggregation);
  }

  // Attention layers: a score per edge and head, softmax, weighted values.
  std::vector<double> score(m * static_cast<size_t>(H), 0.0);
  const ref::Tensor *value = nullptr;
  const ref::Tensor *edge = o.edgeFeatures ? &in.at("e") : nullptr;
  const auto edgeAt = [&](size_t k, int64_t h, int64_t c) {
    return edge ? edge->at(static_cast<int64_t>(k), h * C + c) : 0.0;
  };
  if (name == "gat") {
    const ref::Tensor &x = in.at("x"), &as = in.at("att_src"), &ad = in.at("att_dst");
    const ref::Tensor &xd = o.bipartite ? in.at("x_dst") : x; // PyG's x_dst
    value = &x;
    for (size_t k = 0; k < m; ++k)
      for (int64_t h = 0; h < H; ++h) {
        double aj = 0, ai = 0, ae = 0;
        for (int64_t c = 0; c < C; ++c) {
          aj += x.at(e.src[k], h * C + c) * as.at(0, h * C + c);
          ai += xd.at(e.dst[k], h * C + c) * ad.at(0, h * C + c);
          if (edge)
            ae += edgeAt(k, h, c) * in.at("att_edge").at(0, h * C + c);
        }
        score[k * H + h] = leaky(aj + ai + ae, o.negativeSlope);
      }
  } else if (name == "gatv2") {
    const ref::Tensor &xl = in.at("xl"), &xr = in.at("xr"), &att = in.at("att");
    value = &xl;
    for (size_t k = 0; k < m; ++k)
      for (int64_t h = 0; h < H; ++h) {
        double s = 0;
        for (int64_t c = 0; c < C; ++c)
          s += leaky(xr.at(e.dst[k], h * C + c) + xl.at(e.src[k], h * C + c) + edgeAt(k, h, c), o.negativeSlope) *
               att.at(0, h * C + c);
        score[k * H + h] = s;
      }
  } else if (name == "transformer") {
    const ref::Tensor &q = in.at("q"), &kk = in.at("k");
    value = &in.at("v");
    for (size_t k = 0; k < m; ++k)
      for (int64_t h = 0; h < H; ++h) {
        double s = 0;
        for (int64_t c = 0; c < C; ++c)
          s += q.at(e.dst[k], h * C + c) * (kk.at(e.src[k], h * C + c) + edgeAt(k, h, c));
        score[k * H + h] = s / std::sqrt(static_cast<double>(C));
      }
  } else if (name == "agnn") {
    const ref::Tensor &x = in.at("x");
    value = &x;
    const double beta = in.at("beta").at(0, 0);
    ref::Tensor xn(n, C);
    for (int64_t i = 0; i < n; ++i) {
      double norm = 0;
      for (int64_t c = 0; c < C; ++c)
        norm += x.at(i, c) * x.at(i, c);
      norm = std::max(std::sqrt(norm), 1e-12); // F.normalize
      for (int64_t c = 0; c < C; ++c)
        xn.at(i, c) = x.at(i, c) / norm;
    }
    for (size_t k = 0; k < m; ++k) {
      double s = 0;
      for (int64_t c = 0; c < C; ++c)
        s += xn.at(e.dst[k], c) * xn.at(e.src[k], c);
      score[k] = beta * s;
    }
  } else {
    FAIL("no PyG-style implementation of " << name);
  }
  const std::vector<double> alpha = softmax(e, score, H);
  const bool addEdgeToValue = name == "transformer" && edge;
  for (size_t k = 0; k < m; ++k)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t c = 0; c < C; ++c)
        msg[k][h * C + c] =
            alpha[k * H + h] * (value->at(e.src[k], h * C + c) + (addEdgeToValue ? edgeAt(k, h, c) : 0.0));
  return heads(scatter(e, msg, HC, "sum"), H, C, o.concat);
}

graph::Graph testGraph(uint64_t seed, bool weighted, graph::SelfLoops loops) {
  // A hub, isolated nodes, sources without in-edges, self loops and a duplicate.
  Rng rng(seed);
  graph::EdgeList e;
  e.numNodes = 30;
  const auto add = [&](int64_t s, int64_t d) {
    if (weighted)
      e.add(s, d, static_cast<float>(0.25 + 2 * rng.uniform()));
    else
      e.add(s, d);
  };
  for (int64_t j = 1; j < 24; ++j)
    add(j, 0);
  for (int k = 0; k < 50; ++k)
    add(static_cast<int64_t>(rng.below(26)), 1 + static_cast<int64_t>(rng.below(22)));
  add(4, 4);
  add(9, 9);
  add(9, 9);
  add(2, 3);
  add(2, 3);
  graph::BuildOptions options;
  options.selfLoops = loops;
  return graph::Graph::fromEdges(e, options);
}

} // namespace

TEST_CASE("every layer equals an edge-list implementation of its PyG class") {
  uint64_t seed = 40;
  for (const bool weighted : {false, true})
    for (const graph::SelfLoops loops : {graph::SelfLoops::Keep, graph::SelfLoops::AddMissing}) {
      const graph::Graph g = testGraph(seed, weighted, loops);
      const Edges e = edgesOf(g);
      for (const LayerCase &c : test::allLayerCases(3, 2)) {
        INFO(c.label << (weighted ? ", weighted" : "") << (loops == graph::SelfLoops::Keep ? "" : ", loops added"));
        const dsl::Layer layer = layers::buildLayer(c.layer, c.options);
        const ref::TensorMap inputs = test::randomInputs(layer, g, ++seed);
        const ref::Tensor got = ref::forward(layer, g, inputs).at("out");
        const ref::Tensor want = pygStyle(c, e, inputs);
        REQUIRE(got.rows == want.rows);
        REQUIRE(got.cols == want.cols);
        double worst = 0;
        for (size_t k = 0; k < want.values.size(); ++k)
          worst = std::max(worst, std::abs(got.values[k] - want.values[k]) / std::max(1.0, std::abs(want.values[k])));
        CHECK_MESSAGE(worst <= 1e-12, "largest difference " << worst);
      }
    }
}
