// The attention family's loop skeletons: per row of a CSR, one streaming
// pass over the row's edges that computes, for each edge, the per-head sums
// over the head dim its expressions read (a score's dot products), then
// either folds the edge into an online softmax of the score and a weighted
// sum of the value (the forward), or adds a message to a plain sum (the
// backward, which recomputes alpha from the saved log-sum-exp). No per-edge
// value reaches memory. A generated module supplies an `Ops` struct:
//
//   void rowTerms(double (&r)[NR], long long row, int f) const;
//       adds elements f .. f + V - 1 (one head's) of the row's own per-head
//       sums' operands into r (computed once per row)
//   void edgeTerms(double (&e)[NT], long long row, Index col, long long p, int f) const;
//       the same for the sums that read the edge or its other end
//   float score(const double (&e)[NT], const double (&r)[NR], long long row, Index col, long long p, int h) const;
//       head h's score of edge p, given that head's reduced sums (forward)
//   void message(float (&m)[NO + NE][V], const double (&e)[NT], const double (&r)[NR], long long row, Index col,
//                long long p, int f) const;
//       elements f .. f + V - 1 of the value (forward) or of each message
//       (backward: the NO aggregates over the same edges one loop sums, then
//       NE sums over all edges, parameters' gradients, which groups of the
//       strided kernels add over every edge they walk into one partial each)
//   float finish(int o, long long row, int f, float a) const;  output o's epilogue at element f
//   float *outputRow(int o, long long row) const;              where output o's row goes
//   float *lseRow(long long row) const;                   forward: the saved log-sum-exps
//   float *valueRow(long long row) const;                 forward with SaveValue: the saved aggregate
//   float *sumRow(int k, long long row) const;            per-head sums at nodes: where sum k goes
//   static constexpr int kHeadDim;                        the real head dim (DIM, or below it when padded)
//
// Mapping: SpMM's (gnnjit/spmm.cuh), with whole heads in a tile. A head of
// DIM floats is DIM / V lanes' vectors; when that is fewer than the group's
// G lanes, a chunk holds G x V / DIM heads and a head's sums are reduced
// across its W = DIM / V lanes; when more, a head spans CPH = DIM / (G x V)
// chunks of all G lanes. Each lane thus holds NQ = CH / CPH head slots.
// DIM is the lanes' head dim: Ops::kHeadDim, or above it a padded one
// (headColumn), whose padding lanes the ops give nothing and nothing stores.
// The sums are added in double (a difference of two dot products, as in
// the backward's <dO, v> - <dO, O>, keeps its digits), by xor butterflies,
// so every lane of a head gets the same bits and runs the same softmax
// state. Heavy rows are split into segments whose partial results (and
// softmax states) a combine kernel merges in segment order: no float
// atomics anywhere, the same result on every run.
// A per-head output (bit o of PH, GAT's score gradients) keeps the lanes of
// its [heads, DIM] sums and one accumulator per head; message() then gives
// the head's value in m[o][0], and finish() takes the head as its element.
#pragma once

#include "gnnjit/node.cuh"
#include "gnnjit/online_softmax.cuh"
#include "gnnjit/spmm.cuh"

namespace gnnjit::device {

// The kernels' entry points (attendRows, attendSegments, attendCombine,
// attendRowsAndSums, attendSegmentsAndSums, attendRanges, attendHeadSums)
// take what a generated module fixes at compile time as one type K of named
// constants (codegen/AttentionKernel.cpp writes one per tiling, its rows'
// and its segments'):
//   kGroup, kVec, kChunks     G, V, CH: lanes per unit (row, segment or
//                             range), floats per access, vectors per lane
//   kWidth, kHeadDim          F, DIM: floats per row in the lanes' layout,
//                             and per head
//   kRowOutputs, kEdgeSumOutputs
//                             NO, NE: sums per row, then sums over all edges
//   kPerHead                  PH: bit o set where output o is one value per head
//   kEdgeSums, kRowSums       NT, NR: per-head sums per edge, per row (at least 1)
//   kSoftmax, kSaveValue      the forward's online softmax; it saves the aggregate
// Inside, they keep their short names.

template <int G, int V, int CH, int DIM> struct HeadLayout {
  static_assert(DIM % V == 0, "a vector must not straddle two heads");
  static constexpr int kHeadLanes = DIM / V;
  static constexpr int W = kHeadLanes < G ? kHeadLanes : G; ///< lanes a head spans in a chunk
  static constexpr int CPH = kHeadLanes > G ? kHeadLanes / G : 1; ///< chunks a head spans
  static_assert(G % W == 0 && CH % CPH == 0 && isGroupWidth(W), "a tile must hold whole heads");
  static constexpr int NQ = CH / CPH; ///< head slots per lane
};

/// The feature a lane computes for vector start f: f itself, or for a lane
/// past the last head (a partial tile) the last vector again. Its loads then
/// stay in bounds and need no branch, so the compiler can keep a row's
/// loop-invariant loads out of the edge loop and share a gathered row
/// between the score and the message; what such a lane computes is never
/// stored (the stores check f < F), and its heads' lanes only exchange sums
/// among themselves.
template <int F, int V> GNNJIT_DEVICE int liveFeature(int f) { return f < F ? f : F - V; }

/// The output column of lane feature f when heads of RDIM floats are laid
/// out as DIM >= RDIM (padded: a head whose RDIM / V lanes have an odd
/// factor, GATv2 4 x 122, takes DIM / V, a power of two); -1 in a head's
/// padding, which the ops read and sum nothing for and nothing stores.
template <int DIM, int RDIM> GNNJIT_DEVICE int headColumn(int f) {
  if constexpr (DIM == RDIM) {
    return f;
  } else {
    const int d = f % DIM;
    return d < RDIM ? f / DIM * RDIM + d : -1;
  }
}

/// Zeroes n[q][k].
template <int NQ, int N> GNNJIT_DEVICE void zeroSums(double (&n)[NQ][N]) {
#pragma unroll
  for (int q = 0; q < NQ; ++q)
#pragma unroll
    for (int k = 0; k < N; ++k)
      n[q][k] = 0.0f;
}

/// Each slot's partial sums added across the head's W lanes (all lanes of
/// the group must call, whether or not their features are in range).
template <int W, int NQ, int N> GNNJIT_DEVICE void reduceHeads(double (&n)[NQ][N], unsigned mask) {
#pragma unroll
  for (int q = 0; q < NQ; ++q)
#pragma unroll
    for (int k = 0; k < N; ++k)
      n[q][k] = groupSum<W>(n[q][k], mask);
}

/// The row's own per-head sums, reduced.
template <int G, int V, int CH, int F, int DIM, int NR, class Ops>
GNNJIT_DEVICE void rowSums(const Ops &ops, const SpmmTile<G, V, CH> &t,
                           double (&r)[HeadLayout<G, V, CH, DIM>::NQ][NR], long long row) {
  using L = HeadLayout<G, V, CH, DIM>;
  zeroSums(r);
#pragma unroll
  for (int c = 0; c < CH; ++c) {
    const int f = t.feature(c);
    if (f < F)
      ops.rowTerms(r[c / L::CPH], row, f);
  }
  reduceHeads<L::W>(r, t.mask);
}

/// An online softmax whose running sum is a double: with double
/// accumulators the forward's aggregate O is accurate to a few units in the
/// last place of a float, so the backward's <dO, v_j> - <dO, O> (which
/// cancels where one edge dominates) keeps its digits. The weights and
/// rescale factors are floats (gnnjit/online_softmax.cuh's rules).
struct SoftmaxSum {
  float max = negativeInfinity();
  double sum = 0.0;

  /// One exp per edge: the larger of the score and the running max is the
  /// new max, so exactly one of the two factors is exp(smaller - larger)
  /// and the other is 1 (the same values as computing both).
  GNNJIT_DEVICE SoftmaxStep update(float score) {
    const bool grows = score > max; // false for a score of -inf, which adds nothing
    const float smaller = grows ? max : score;
    const float larger = grows ? score : max;
    // exp(-inf) = 0 (a select, no branch); a NaN score still gives NaN.
    const float factor = expf(score == negativeInfinity() ? negativeInfinity() : smaller - larger);
    const SoftmaxStep step{grows ? factor : 1.0f, grows ? 1.0f : factor};
    sum = grows ? sum * factor + 1.0 : sum + factor;
    max = larger;
    return step;
  }
  /// Folds in a later segment's state (every lane of a head in the same order).
  GNNJIT_DEVICE SoftmaxStep merge(float otherMax, double otherSum) {
    const float newMax = fmaxf(max, otherMax);
    const SoftmaxStep step{OnlineSoftmax::scaleFactor(max, newMax), OnlineSoftmax::scaleFactor(otherMax, newMax)};
    sum = sum * step.rescale + otherSum * step.weight;
    max = newMax;
    return step;
  }
  GNNJIT_DEVICE float logSumExp() const { return sum > 0.0 ? max + (float)log(sum) : negativeInfinity(); }
  GNNJIT_DEVICE double inverseSum() const { return sum > 0.0 ? 1.0 / sum : 0.0; }
};

/// The accumulator type of a row's sums: double for heads of 128 floats or
/// more, where a float's rounding over a row's edges showed in the
/// backward's <dO, v> - <dO, O> (the GPU tests at head dims 128 and 256);
/// float below, where it did not and the forward is faster (H200, GATv2 4 x
/// 32 on R-MAT: 3.0 vs 3.6 ms). Sums over all edges always add in double.
template <bool Wide> struct AccumulatorOf {
  using Type = float;
};
template <> struct AccumulatorOf<true> {
  using Type = double;
};
template <int DIM> using RowAccumulator = AccumulatorOf<(DIM >= 128)>;

/// What a lane keeps for one row (or segment): its accumulators, and for
/// the softmax one state per head slot.
template <int NO, int CH, int V, typename Acc> GNNJIT_DEVICE void zeroAll(Acc (&acc)[NO][CH][V]) {
#pragma unroll
  for (int o = 0; o < NO; ++o)
#pragma unroll
    for (int c = 0; c < CH; ++c)
#pragma unroll
      for (int v = 0; v < V; ++v)
        acc[o][c][v] = Acc(0);
}

template <int CH, int V, int NQ, typename Acc, int NO> struct AttendState {
  Acc acc[NO][CH][V];
  SoftmaxSum softmax[NQ];
  GNNJIT_DEVICE AttendState() { zeroAll(acc); }
};

/// Whether output o of a step is per head (bit o of the mask PH).
GNNJIT_DEVICE constexpr bool perHeadOutput(int ph, int o) { return ((ph >> o) & 1) != 0; }

/// A group's sums over all the edges it walks, of a step's NE outputs over
/// all edges (parameters' gradients), in double; none when NE is 0.
template <int CH, int V, int NE> struct EdgeSums {
  double acc[NE][CH][V];
  GNNJIT_DEVICE EdgeSums() { zeroAll(acc); }
};
template <int CH, int V> struct EdgeSums<CH, V, 0> {};

/// Folds the edges at CSR positions [begin, end) of `row` into `s`:
/// Softmax, the online softmax of the score weighting the message; else
/// the plain sums of the NO messages; and messages NO .. NO + NE - 1 into
/// the sums over all edges `sums`.
template <int G, int V, int CH, int F, int DIM, int NO, int NE, int PH, int NT, int NR, bool Softmax, typename Acc,
          typename Index, class Ops>
GNNJIT_DEVICE void attendEdges(const Ops &ops, const SpmmTile<G, V, CH> &t,
                               AttendState<CH, V, HeadLayout<G, V, CH, DIM>::NQ, Acc, NO> &s, EdgeSums<CH, V, NE> &sums,
                               const double (&r)[HeadLayout<G, V, CH, DIM>::NQ][NR], long long row, long long begin,
                               long long end, const Index *__restrict__ cols) {
  using L = HeadLayout<G, V, CH, DIM>;
  for (long long base = begin; base < end; base += G) {
    const Index myCol = base + t.lane < end ? cols[base + t.lane] : Index(0);
    const int n = (int)min((long long)G, end - base);
    // Not unrolled: with a row's loads out of the loop, unrolling by 2 let
    // ptxas overlap two edges at 60 registers instead of 40 (GATv2 4 x 32);
    // the lost occupancy cost more than the overlap gained on every graph
    // measured (H200, GATv2 forward / backward ms, rmat 20: 3.39 / 10.7
    // unrolled, 2.69 / 7.17 not; grid 1024: 1.07 / 3.09 vs 0.83 / 2.15).
#pragma unroll 1
    for (int k = 0; k < n; ++k) {
      const Index col = __shfl_sync(t.mask, myCol, k, G);
      const long long p = base + k;
      double e[L::NQ][NT];
      zeroSums(e);
#pragma unroll
      for (int c = 0; c < CH; ++c)
        ops.edgeTerms(e[c / L::CPH], row, col, p, liveFeature<F, V>(t.feature(c)));
      reduceHeads<L::W>(e, t.mask);
#pragma unroll
      for (int q = 0; q < L::NQ; ++q) {
        SoftmaxStep step{1.0f, 1.0f};
        if constexpr (Softmax)
          step = s.softmax[q].update(ops.score(e[q], r[q], row, col, p, liveFeature<F, V>(t.feature(q * L::CPH)) / DIM));
#pragma unroll
        for (int c = q * L::CPH; c < (q + 1) * L::CPH; ++c) {
          float m[NO + NE][V];
          ops.message(m, e[q], r[q], row, col, p, liveFeature<F, V>(t.feature(c)));
          if constexpr (NE > 0) {
#pragma unroll
            for (int o = 0; o < NE; ++o)
              if (!perHeadOutput(PH, NO + o) || c == q * L::CPH)
#pragma unroll
                for (int v = 0; v < V; ++v) // (a per-head sum's value is in m[NO + o][0], the rest 0)
                  sums.acc[o][c][v] += m[NO + o][v];
          }
#pragma unroll
          for (int o = 0; o < NO; ++o) {
            if (perHeadOutput(PH, o)) {
              // One value per head (in m[o][0]), kept in the slot's first accumulator.
              if (c == q * L::CPH) {
                Acc &a = s.acc[o][c][0];
                a = Softmax ? a * step.rescale + Acc(step.weight * m[o][0]) : a + m[o][0];
              }
              continue;
            }
#pragma unroll
            for (int v = 0; v < V; ++v)
              s.acc[o][c][v] = Softmax ? s.acc[o][c][v] * step.rescale + Acc(step.weight * m[o][v])
                                       : s.acc[o][c][v] + m[o][v];
          }
        }
      }
    }
  }
}

/// The row's results through their epilogues; with Softmax divided by the
/// softmax sum (an empty row gives 0), the log-sum-exps saved by each
/// head's first lane, and with SaveValue the aggregate (output 0) saved.
template <int G, int V, int CH, int F, int DIM, int NO, int PH, bool Softmax, bool SaveValue, typename Acc, class Ops>
GNNJIT_DEVICE void attendStore(const Ops &ops, const SpmmTile<G, V, CH> &t,
                               const AttendState<CH, V, HeadLayout<G, V, CH, DIM>::NQ, Acc, NO> &s, long long row) {
  using L = HeadLayout<G, V, CH, DIM>;
#pragma unroll
  for (int q = 0; q < L::NQ; ++q) {
    const int f0 = t.feature(q * L::CPH);
    if (f0 >= F)
      continue;
    const double scale = Softmax ? s.softmax[q].inverseSum() : 1.0;
    if constexpr (Softmax)
      if (f0 % DIM == 0)
        ops.lseRow(row)[f0 / DIM] = s.softmax[q].logSumExp();
#pragma unroll
    for (int o = 0; o < NO; ++o) {
      float *out = ops.outputRow(o, row);
      if (perHeadOutput(PH, o)) {
        if (f0 % DIM == 0) { // the head's one value, by its first lane
          const int h = f0 / DIM;
          const float a = (float)(s.acc[o][q * L::CPH][0] * scale);
          out[h] = ops.finish(o, row, h, a);
          if constexpr (SaveValue)
            if (o == 0)
              ops.valueRow(row)[h] = a;
        }
        continue;
      }
#pragma unroll
      for (int c = q * L::CPH; c < (q + 1) * L::CPH; ++c) {
        const int fc = headColumn<DIM, Ops::kHeadDim>(t.feature(c)); // V divides RDIM: a vector is all in or out
        if (fc < 0)
          continue;
        float result[V];
#pragma unroll
        for (int v = 0; v < V; ++v) {
          const float a = (float)(s.acc[o][c][v] * scale);
          result[v] = ops.finish(o, row, fc + v, a);
          if constexpr (SaveValue)
            if (o == 0)
              ops.valueRow(row)[fc + v] = a;
        }
        storeResult<V>(out + fc, result);
      }
    }
  }
}

/// One light row (a heavy one is left to segments): its outputs stored,
/// its edges' messages over all edges added into `sums`.
template <int G, int V, int CH, int F, int DIM, int NO, int NE, int PH, int NT, int NR, bool Softmax, bool SaveValue,
          typename Index, class Ops>
GNNJIT_DEVICE void attendRow(const Ops &ops, const SpmmTile<G, V, CH> &t, long long row,
                             const Index *__restrict__ offsets, const Index *__restrict__ cols,
                             EdgeSums<CH, V, NE> &sums, long long heavyThreshold) {
  using L = HeadLayout<G, V, CH, DIM>;
  const long long begin = offsets[row], end = offsets[row + 1];
  if (heavyThreshold > 0 && end - begin > heavyThreshold)
    return; // split into segments instead
  double r[L::NQ][NR];
  rowSums<G, V, CH, F, DIM, NR>(ops, t, r, row);
  AttendState<CH, V, L::NQ, typename RowAccumulator<DIM>::Type, NO> s;
  attendEdges<G, V, CH, F, DIM, NO, NE, PH, NT, NR, Softmax>(ops, t, s, sums, r, row, begin, end, cols);
  attendStore<G, V, CH, F, DIM, NO, PH, Softmax, SaveValue>(ops, t, s, row);
}

/// Light rows (all rows when heavyThreshold is 0): a group of G lanes per row.
template <class K, typename Index, class Ops>
GNNJIT_DEVICE void attendRows(const Ops &ops, long long numRows, const Index *__restrict__ offsets,
                              const Index *__restrict__ cols, long long heavyThreshold) {
  constexpr int G = K::kGroup, V = K::kVec, CH = K::kChunks, F = K::kWidth, DIM = K::kHeadDim, NO = K::kRowOutputs;
  constexpr int PH = K::kPerHead, NT = K::kEdgeSums, NR = K::kRowSums;
  constexpr bool Softmax = K::kSoftmax, SaveValue = K::kSaveValue;
  const SpmmTile<G, V, CH> t;
  if (t.unit >= numRows)
    return; // the whole group leaves together
  EdgeSums<CH, V, 0> none;
  attendRow<G, V, CH, F, DIM, NO, 0, PH, NT, NR, Softmax, SaveValue>(ops, t, t.unit, offsets, cols, none,
                                                                      heavyThreshold);
}

/// The groups of the launch: a strided kernel's group u takes units u, u +
/// groups, u + 2 x groups, ...
template <int G> GNNJIT_DEVICE long long launchGroups() { return (long long)gridDim.x * blockDim.x / G; }

/// A group's sums over all edges as partial `u` of numPartials:
/// sumPartials[e * numPartials + u] for element e of the outputs' sums in
/// order (a float per column, or one per head for a per-head sum).
template <int G, int V, int CH, int F, int DIM, int NO, int NE, int PH, class Ops>
GNNJIT_DEVICE void writeEdgeSums(const SpmmTile<G, V, CH> &t, const EdgeSums<CH, V, NE> &sums,
                                 float *__restrict__ sumPartials, long long numPartials, long long u) {
  constexpr int H = F / DIM, columns = H * Ops::kHeadDim;
  forOwnedFeatures<G, V, CH, F>(t, [&](int c, int v, int f) {
    const int column = headColumn<DIM, Ops::kHeadDim>(f);
    int base = 0;
#pragma unroll
    for (int o = 0; o < NE; ++o) {
      if (perHeadOutput(PH, NO + o)) {
        if (f % DIM == 0)
          sumPartials[(base + f / DIM) * numPartials + u] = (float)sums.acc[o][c][v];
        base += H;
      } else {
        if (column >= 0)
          sumPartials[(base + column) * numPartials + u] = (float)sums.acc[o][c][v];
        base += columns;
      }
    }
  });
}

/// Light rows of a step that also sums messages over all edges (NE outputs
/// after its NO row outputs): group u of the launch's groups walks rows u,
/// u + groups, ... (a fixed assignment), adds their edges into its sums and
/// writes them as partial u (the finish kernel adds all partials in order:
/// the same result on every run).
template <class K, typename Index, class Ops>
GNNJIT_DEVICE void attendRowsAndSums(const Ops &ops, long long numRows, const Index *__restrict__ offsets,
                                     const Index *__restrict__ cols, float *__restrict__ sumPartials,
                                     long long numSumPartials, long long heavyThreshold) {
  constexpr int G = K::kGroup, V = K::kVec, CH = K::kChunks, F = K::kWidth, DIM = K::kHeadDim, NO = K::kRowOutputs;
  constexpr int NE = K::kEdgeSumOutputs, PH = K::kPerHead, NT = K::kEdgeSums, NR = K::kRowSums;
  const SpmmTile<G, V, CH> t;
  EdgeSums<CH, V, NE> sums;
  for (long long row = t.unit; row < numRows; row += launchGroups<G>())
    attendRow<G, V, CH, F, DIM, NO, NE, PH, NT, NR, false, false>(ops, t, row, offsets, cols, sums, heavyThreshold);
  writeEdgeSums<G, V, CH, F, DIM, NO, NE, PH, Ops>(t, sums, sumPartials, numSumPartials, t.unit);
}

/// Per-head sums at each node, for kernels that read them at an edge's far
/// end: rowSums of the node, written by each head's first lane as
/// ops.sumRow(k, row)[h] (a float per head and sum).
template <class K, class Ops>
GNNJIT_DEVICE void attendHeadSums(const Ops &ops, long long numRows) {
  constexpr int G = K::kGroup, V = K::kVec, CH = K::kChunks, F = K::kWidth, DIM = K::kHeadDim, NR = K::kRowSums;
  using L = HeadLayout<G, V, CH, DIM>;
  const SpmmTile<G, V, CH> t;
  const long long row = t.unit;
  if (row >= numRows)
    return;
  double r[L::NQ][NR];
  rowSums<G, V, CH, F, DIM, NR>(ops, t, r, row);
#pragma unroll
  for (int q = 0; q < L::NQ; ++q) {
    const int f0 = t.feature(q * L::CPH);
    if (f0 < F && f0 % DIM == 0)
#pragma unroll
      for (int k = 0; k < NR; ++k)
        ops.sumRow(k, row)[f0 / DIM] = (float)r[q][k];
  }
}

/// Floats of `partials` per heavy-row segment (attendSegment writes them,
/// attendCombine reads them): NO sums of F floats, then with Softmax a
/// state (max, sum) per head. The plan states the same for the host
/// (lower::SegmentMerge); each generated module checks the two agree.
template <int F, int DIM, int NO, bool Softmax> constexpr long long attendSegmentFloats() {
  return (long long)NO * F + (Softmax ? 2 * (F / DIM) : 0);
}

/// One segment of segmentLength edges of a heavy row: its unnormalized sums of
/// output o go to partials[(segment * NO + o) * F + f] and, with Softmax,
/// its states (max, sum) per head to partials[numSegments * NO * F +
/// (segment * H + h) * 2 + {0, 1}].
template <int G, int V, int CH, int F, int DIM, int NO, int NE, int PH, int NT, int NR, bool Softmax, typename Index,
          class Ops>
GNNJIT_DEVICE void attendSegment(const Ops &ops, const SpmmTile<G, V, CH> &t, long long segment, long long numSegments,
                                 const Index *__restrict__ offsets, const Index *__restrict__ cols,
                                 const Index *__restrict__ segmentRows, const long long *__restrict__ segmentBegins,
                                 float *__restrict__ partials, EdgeSums<CH, V, NE> &sums, long long segmentLength) {
  using L = HeadLayout<G, V, CH, DIM>;
  constexpr int H = F / DIM;
  const long long row = segmentRows[segment];
  const long long begin = segmentBegins[segment];
  const long long end = min(begin + segmentLength, (long long)offsets[row + 1]);
  double r[L::NQ][NR];
  rowSums<G, V, CH, F, DIM, NR>(ops, t, r, row);
  AttendState<CH, V, L::NQ, typename RowAccumulator<DIM>::Type, NO> s;
  attendEdges<G, V, CH, F, DIM, NO, NE, PH, NT, NR, Softmax>(ops, t, s, sums, r, row, begin, end, cols);
  // (A per-head output's other accumulators stay 0: their partials too.)
  forOwnedFeatures<G, V, CH, F>(t, [&](int c, int v, int f) {
#pragma unroll
    for (int o = 0; o < NO; ++o)
      partials[(segment * NO + o) * F + f] = (float)s.acc[o][c][v];
    if constexpr (Softmax)
      if (f % DIM == 0) {
        float *state = partials + numSegments * NO * F + (segment * H + f / DIM) * 2;
        state[0] = s.softmax[c / L::CPH].max;
        state[1] = (float)s.softmax[c / L::CPH].sum;
      }
  });
}

template <class K, typename Index, class Ops>
GNNJIT_DEVICE void attendSegments(const Ops &ops, long long numSegments, const Index *__restrict__ offsets,
                                  const Index *__restrict__ cols, const Index *__restrict__ segmentRows,
                                  const long long *__restrict__ segmentBegins, float *__restrict__ partials,
                                  long long segmentLength) {
  constexpr int G = K::kGroup, V = K::kVec, CH = K::kChunks, F = K::kWidth, DIM = K::kHeadDim, NO = K::kRowOutputs;
  constexpr int PH = K::kPerHead, NT = K::kEdgeSums, NR = K::kRowSums;
  constexpr bool Softmax = K::kSoftmax;
  const SpmmTile<G, V, CH> t;
  if (t.unit >= numSegments)
    return;
  EdgeSums<CH, V, 0> none;
  attendSegment<G, V, CH, F, DIM, NO, 0, PH, NT, NR, Softmax>(ops, t, t.unit, numSegments, offsets, cols, segmentRows,
                                                               segmentBegins, partials, none, segmentLength);
}

/// Heavy-row segments of a step that also sums over all edges: strided
/// like attendRowsAndSums, the group's sums written as partial sumBase + u.
template <class K, typename Index, class Ops>
GNNJIT_DEVICE void attendSegmentsAndSums(const Ops &ops, long long numSegments, const Index *__restrict__ offsets,
                                         const Index *__restrict__ cols, const Index *__restrict__ segmentRows,
                                         const long long *__restrict__ segmentBegins, float *__restrict__ partials,
                                         float *__restrict__ sumPartials, long long numSumPartials, long long sumBase,
                                         long long segmentLength) {
  constexpr int G = K::kGroup, V = K::kVec, CH = K::kChunks, F = K::kWidth, DIM = K::kHeadDim, NO = K::kRowOutputs;
  constexpr int NE = K::kEdgeSumOutputs, PH = K::kPerHead, NT = K::kEdgeSums, NR = K::kRowSums;
  const SpmmTile<G, V, CH> t;
  EdgeSums<CH, V, NE> sums;
  for (long long segment = t.unit; segment < numSegments; segment += launchGroups<G>())
    attendSegment<G, V, CH, F, DIM, NO, NE, PH, NT, NR, false>(ops, t, segment, numSegments, offsets, cols, segmentRows,
                                                                segmentBegins, partials, sums, segmentLength);
  writeEdgeSums<G, V, CH, F, DIM, NO, NE, PH, Ops>(t, sums, sumPartials, numSumPartials, sumBase + t.unit);
}

/// A heavy row: its segments merged in segment order (softmax states and
/// accumulators rescaled alike), then stored like a light row.
template <class K, typename Index, class Ops>
GNNJIT_DEVICE void attendCombine(const Ops &ops, long long numSegments, long long numHeavyRows,
                                 const Index *__restrict__ offsets, const Index *__restrict__ heavyRows,
                                 const long long *__restrict__ heavyFirstSegment, const float *__restrict__ partials) {
  constexpr int G = K::kGroup, V = K::kVec, CH = K::kChunks, F = K::kWidth, DIM = K::kHeadDim, NO = K::kRowOutputs;
  constexpr int PH = K::kPerHead;
  constexpr bool Softmax = K::kSoftmax, SaveValue = K::kSaveValue;
  (void)offsets;
  using L = HeadLayout<G, V, CH, DIM>;
  constexpr int H = F / DIM;
  const SpmmTile<G, V, CH> t;
  const long long heavy = t.unit;
  if (heavy >= numHeavyRows)
    return;
  const long long row = heavyRows[heavy];
  AttendState<CH, V, L::NQ, typename RowAccumulator<DIM>::Type, NO> s;
  for (long long seg = heavyFirstSegment[heavy]; seg < heavyFirstSegment[heavy + 1]; ++seg) {
#pragma unroll
    for (int q = 0; q < L::NQ; ++q) {
      const int f0 = t.feature(q * L::CPH);
      if (f0 >= F)
        continue;
      SoftmaxStep step{1.0f, 1.0f};
      if constexpr (Softmax) {
        const float *state = partials + numSegments * NO * F + (seg * H + f0 / DIM) * 2;
        step = s.softmax[q].merge(state[0], state[1]);
      }
#pragma unroll
      for (int o = 0; o < NO; ++o)
#pragma unroll
        for (int c = q * L::CPH; c < (q + 1) * L::CPH; ++c)
#pragma unroll
          for (int v = 0; v < V; ++v) {
            const double part = partials[(seg * NO + o) * F + t.feature(c) + v];
            s.acc[o][c][v] = Softmax ? s.acc[o][c][v] * step.rescale + part * step.weight : s.acc[o][c][v] + part;
          }
    }
  }
  attendStore<G, V, CH, F, DIM, NO, PH, Softmax, SaveValue>(ops, t, s, row);
}

/// A sum over all edges (a parameter's gradient): group u of numRanges takes
/// the CSR positions [u x per, (u + 1) x per), per = ceil(E / numRanges), row
/// by row, and writes its sums to partials[f * numRanges + u]; a finish
/// kernel adds them in a fixed order (the same result on every run, whatever
/// the degrees: a hub's edges are shared among groups like any others).
template <class K, typename Index, class Ops>
GNNJIT_DEVICE void attendRanges(const Ops &ops, long long numRows, const Index *__restrict__ offsets,
                                const Index *__restrict__ cols, long long numRanges, float *__restrict__ partials) {
  constexpr int G = K::kGroup, V = K::kVec, CH = K::kChunks, F = K::kWidth, DIM = K::kHeadDim, PH = K::kPerHead;
  constexpr int NT = K::kEdgeSums, NR = K::kRowSums;
  using L = HeadLayout<G, V, CH, DIM>;
  const SpmmTile<G, V, CH> t;
  const long long unit = t.unit;
  if (unit >= numRanges)
    return;
  const long long edges = offsets[numRows];
  const long long per = (edges + numRanges - 1) / numRanges;
  const long long begin = min(edges, unit * per), end = min(edges, begin + per);
  AttendState<CH, V, L::NQ, double, 1> s;
  EdgeSums<CH, V, 0> none;
  if (begin < end) {
    // The row holding position begin: offsets[row] <= begin < offsets[row + 1].
    long long lo = 0, hi = numRows - 1;
    while (lo < hi) {
      const long long mid = (lo + hi + 1) / 2;
      if ((long long)offsets[mid] <= begin)
        lo = mid;
      else
        hi = mid - 1;
    }
    for (long long row = lo, p = begin; p < end; ++row) {
      const long long rowEnd = min(end, (long long)offsets[row + 1]);
      if (p >= rowEnd)
        continue;
      double r[L::NQ][NR];
      rowSums<G, V, CH, F, DIM, NR>(ops, t, r, row);
      attendEdges<G, V, CH, F, DIM, 1, 0, PH, NT, NR, false>(ops, t, s, none, r, row, p, rowEnd, cols);
      p = rowEnd;
    }
  }
  forOwnedFeatures<G, V, CH, F>(t, [&](int c, int v, int f) {
    if (perHeadOutput(PH, 0)) {
      if (f % DIM == 0) // a per-head sum: one partial per head
        partials[(f / DIM) * numRanges + unit] = (float)s.acc[0][c][v];
    } else if (const int column = headColumn<DIM, Ops::kHeadDim>(f); column >= 0) {
      partials[column * numRanges + unit] = (float)s.acc[0][c][v];
    }
  });
}

/// A block per element f: its numPartials partials (partials[f * numPartials
/// + u]) added in double, each thread over a fixed stride, then in a fixed
/// tree; the same result on every run.
template <int F, int Block>
GNNJIT_DEVICE void attendFinish(const float *__restrict__ partials, long long numPartials, float *__restrict__ out) {
  __shared__ double sums[Block];
  const int f = blockIdx.x;
  double sum = 0.0;
  for (long long u = threadIdx.x; u < numPartials; u += Block)
    sum += partials[f * numPartials + u];
  sums[threadIdx.x] = sum;
  __syncthreads();
  for (int half = Block / 2; half > 0; half /= 2) {
    if ((int)threadIdx.x < half)
      sums[threadIdx.x] += sums[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    out[f] = (float)sums[0];
}

} // namespace gnnjit::device
