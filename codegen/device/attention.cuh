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
//   void message(float (&m)[V], const double (&e)[NT], const double (&r)[NR], long long row, Index col,
//                long long p, int f) const;
//       elements f .. f + V - 1 of the value (forward) or message (backward)
//   float finish(long long row, int f, float a) const;    the epilogue at element f
//   float *outputRow(long long row) const;                where the row's result goes
//   float *lseRow(long long row) const;                   forward: the saved log-sum-exps
//   float *valueRow(long long row) const;                 forward with SaveValue: the saved aggregate
//   float *sumRow(int k, long long row) const;            per-head sums at nodes: where sum k goes
//
// Mapping: SpMM's (gnnjit/spmm.cuh), with whole heads in a tile. A head of
// DIM floats is DIM / V lanes' vectors; when that is fewer than the group's
// G lanes, a chunk holds G x V / DIM heads and a head's sums are reduced
// across its W = DIM / V lanes; when more, a head spans CPH = DIM / (G x V)
// chunks of all G lanes. Each lane thus holds NQ = CH / CPH head slots.
// The sums are added in double (a difference of two dot products, as in
// the backward's <dO, v> - <dO, O>, keeps its digits), by xor butterflies,
// so every lane of a head gets the same bits and runs the same softmax state. Heavy rows are split into segments
// whose partial results (and softmax states) a combine kernel merges in
// segment order: no float atomics anywhere, the same result on every run.
// A per-head aggregate (ODIM = 1, GAT's score gradients) keeps the lanes of
// its [heads, DIM] sums and one accumulator per head; message() then gives
// the head's value in m[0], and finish() takes the head as its element.
#pragma once

#include "gnnjit/node.cuh"
#include "gnnjit/online_softmax.cuh"
#include "gnnjit/spmm.cuh"

namespace gnnjit::device {

template <int G, int V, int CH, int DIM> struct HeadLayout {
  static_assert(DIM % V == 0, "a vector must not straddle two heads");
  static constexpr int kHeadLanes = DIM / V;
  static constexpr int W = kHeadLanes < G ? kHeadLanes : G; ///< lanes a head spans in a chunk
  static constexpr int CPH = kHeadLanes > G ? kHeadLanes / G : 1; ///< chunks a head spans
  static_assert(G % W == 0 && CH % CPH == 0 && isGroupWidth(W), "a tile must hold whole heads");
  static constexpr int NQ = CH / CPH; ///< head slots per lane
};

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

  GNNJIT_DEVICE SoftmaxStep update(float score) {
    const float newMax = fmaxf(max, score);
    const SoftmaxStep step{OnlineSoftmax::scaleFactor(max, newMax),
                           score == negativeInfinity() ? 0.0f : expf(score - newMax)};
    sum = sum * step.rescale + step.weight;
    max = newMax;
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
template <int CH, int V, int NQ, typename Acc> struct AttendState {
  Acc acc[CH][V];
  SoftmaxSum softmax[NQ];
  GNNJIT_DEVICE AttendState() {
#pragma unroll
    for (int c = 0; c < CH; ++c)
#pragma unroll
      for (int v = 0; v < V; ++v)
        acc[c][v] = Acc(0);
  }
};

/// Folds the edges at CSR positions [begin, end) of `row` into `s`:
/// Softmax, the online softmax of the score weighting the message; else
/// the plain sum of the message.
template <int G, int V, int CH, int F, int DIM, int ODIM, int NT, int NR, bool Softmax, typename Acc, typename Index,
          class Ops>
GNNJIT_DEVICE void attendEdges(const Ops &ops, const SpmmTile<G, V, CH> &t,
                               AttendState<CH, V, HeadLayout<G, V, CH, DIM>::NQ, Acc> &s,
                               const double (&r)[HeadLayout<G, V, CH, DIM>::NQ][NR], long long row, long long begin,
                               long long end, const Index *__restrict__ cols) {
  using L = HeadLayout<G, V, CH, DIM>;
  for (long long base = begin; base < end; base += G) {
    const Index myCol = base + t.lane < end ? cols[base + t.lane] : Index(0);
    const int n = (int)min((long long)G, end - base);
#pragma unroll 2
    for (int k = 0; k < n; ++k) {
      const Index col = __shfl_sync(t.mask, myCol, k, G);
      const long long p = base + k;
      double e[L::NQ][NT];
      zeroSums(e);
#pragma unroll
      for (int c = 0; c < CH; ++c) {
        const int f = t.feature(c);
        if (f < F)
          ops.edgeTerms(e[c / L::CPH], row, col, p, f);
      }
      reduceHeads<L::W>(e, t.mask);
#pragma unroll
      for (int q = 0; q < L::NQ; ++q) {
        const int f0 = t.feature(q * L::CPH);
        if (f0 >= F)
          continue; // a head past the last (a partial tile)
        SoftmaxStep step{1.0f, 1.0f};
        if constexpr (Softmax)
          step = s.softmax[q].update(ops.score(e[q], r[q], row, col, p, f0 / DIM));
        if constexpr (ODIM == 1 && DIM > 1) {
          // One value per head (in m[0]), kept in the slot's first accumulator.
          float m[V];
          ops.message(m, e[q], r[q], row, col, p, f0);
          Acc &a = s.acc[q * L::CPH][0];
          a = Softmax ? a * step.rescale + Acc(step.weight * m[0]) : a + m[0];
          continue;
        }
#pragma unroll
        for (int c = q * L::CPH; c < (q + 1) * L::CPH; ++c) {
          float m[V];
          ops.message(m, e[q], r[q], row, col, p, t.feature(c));
#pragma unroll
          for (int v = 0; v < V; ++v)
            s.acc[c][v] = Softmax ? s.acc[c][v] * step.rescale + Acc(step.weight * m[v]) : s.acc[c][v] + m[v];
        }
      }
    }
  }
}

/// The row's results through the epilogue; with Softmax divided by the
/// softmax sum (an empty row gives 0), the log-sum-exps saved by each
/// head's first lane, and with SaveValue the aggregate saved.
template <int G, int V, int CH, int F, int DIM, int ODIM, bool Softmax, bool SaveValue, typename Acc, class Ops>
GNNJIT_DEVICE void attendStore(const Ops &ops, const SpmmTile<G, V, CH> &t,
                               const AttendState<CH, V, HeadLayout<G, V, CH, DIM>::NQ, Acc> &s, long long row) {
  using L = HeadLayout<G, V, CH, DIM>;
  float *out = ops.outputRow(row);
#pragma unroll
  for (int q = 0; q < L::NQ; ++q) {
    const int f0 = t.feature(q * L::CPH);
    if (f0 >= F)
      continue;
    const double scale = Softmax ? s.softmax[q].inverseSum() : 1.0;
    if constexpr (Softmax)
      if (f0 % DIM == 0)
        ops.lseRow(row)[f0 / DIM] = s.softmax[q].logSumExp();
    if constexpr (ODIM == 1 && DIM > 1) {
      if (f0 % DIM == 0) { // the head's one value, by its first lane
        const int h = f0 / DIM;
        const float a = (float)(s.acc[q * L::CPH][0] * scale);
        out[h] = ops.finish(row, h, a);
        if constexpr (SaveValue)
          ops.valueRow(row)[h] = a;
      }
      continue;
    }
#pragma unroll
    for (int c = q * L::CPH; c < (q + 1) * L::CPH; ++c) {
      const int fc = t.feature(c);
      float result[V];
#pragma unroll
      for (int v = 0; v < V; ++v) {
        const float a = (float)(s.acc[c][v] * scale);
        result[v] = ops.finish(row, fc + v, a);
        if constexpr (SaveValue)
          ops.valueRow(row)[fc + v] = a;
      }
      storeResult<V>(out + fc, result);
    }
  }
}

/// Light rows (all rows when Heavy is 0): a group of G lanes per row.
template <int G, int V, int CH, int F, int DIM, int ODIM, int NT, int NR, long long Heavy, bool Softmax,
          bool SaveValue, typename Index, class Ops>
GNNJIT_DEVICE void attendRows(const Ops &ops, long long numRows, const Index *__restrict__ offsets,
                              const Index *__restrict__ cols) {
  using L = HeadLayout<G, V, CH, DIM>;
  const SpmmTile<G, V, CH> t;
  const long long row = t.unit;
  if (row >= numRows)
    return; // the whole group leaves together
  const long long begin = offsets[row], end = offsets[row + 1];
  if (Heavy > 0 && end - begin > Heavy)
    return; // split into segments instead
  double r[L::NQ][NR];
  rowSums<G, V, CH, F, DIM, NR>(ops, t, r, row);
  AttendState<CH, V, L::NQ, typename RowAccumulator<DIM>::Type> s;
  attendEdges<G, V, CH, F, DIM, ODIM, NT, NR, Softmax>(ops, t, s, r, row, begin, end, cols);
  attendStore<G, V, CH, F, DIM, ODIM, Softmax, SaveValue>(ops, t, s, row);
}

/// Per-head sums at each node, for kernels that read them at an edge's far
/// end: rowSums of the node, written by each head's first lane as
/// ops.sumRow(k, row)[h] (a float per head and sum).
template <int G, int V, int CH, int F, int DIM, int NR, class Ops>
GNNJIT_DEVICE void attendHeadSums(const Ops &ops, long long numRows) {
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

/// One segment of Segment edges of a heavy row: its unnormalized sums go to
/// partials[segment * F + f] and, with Softmax, its states (max, sum) per
/// head to partials[numSegments * F + (segment * H + h) * 2 + {0, 1}].
template <int G, int V, int CH, int F, int DIM, int ODIM, int NT, int NR, long long Segment, bool Softmax,
          typename Index, class Ops>
GNNJIT_DEVICE void attendSegments(const Ops &ops, long long numSegments, const Index *__restrict__ offsets,
                                  const Index *__restrict__ cols, const Index *__restrict__ segmentRows,
                                  const long long *__restrict__ segmentBegins, float *__restrict__ partials) {
  using L = HeadLayout<G, V, CH, DIM>;
  constexpr int H = F / DIM;
  const SpmmTile<G, V, CH> t;
  const long long segment = t.unit;
  if (segment >= numSegments)
    return;
  const long long row = segmentRows[segment];
  const long long begin = segmentBegins[segment];
  const long long end = min(begin + Segment, (long long)offsets[row + 1]);
  double r[L::NQ][NR];
  rowSums<G, V, CH, F, DIM, NR>(ops, t, r, row);
  AttendState<CH, V, L::NQ, typename RowAccumulator<DIM>::Type> s;
  attendEdges<G, V, CH, F, DIM, ODIM, NT, NR, Softmax>(ops, t, s, r, row, begin, end, cols);
  // (A per-head aggregate's other accumulators stay 0: their partials too.)
  forOwnedFeatures<G, V, CH, F>(t, [&](int c, int v, int f) {
    partials[segment * F + f] = (float)s.acc[c][v];
    if constexpr (Softmax)
      if (f % DIM == 0) {
        float *state = partials + numSegments * F + (segment * H + f / DIM) * 2;
        state[0] = s.softmax[c / L::CPH].max;
        state[1] = (float)s.softmax[c / L::CPH].sum;
      }
  });
}

/// A heavy row: its segments merged in segment order (softmax states and
/// accumulators rescaled alike), then stored like a light row.
template <int G, int V, int CH, int F, int DIM, int ODIM, bool Softmax, bool SaveValue, typename Index, class Ops>
GNNJIT_DEVICE void attendCombine(const Ops &ops, long long numSegments, long long numHeavyRows,
                                 const Index *__restrict__ offsets, const Index *__restrict__ heavyRows,
                                 const long long *__restrict__ heavyFirstSegment, const float *__restrict__ partials) {
  (void)offsets;
  using L = HeadLayout<G, V, CH, DIM>;
  constexpr int H = F / DIM;
  const SpmmTile<G, V, CH> t;
  const long long heavy = t.unit;
  if (heavy >= numHeavyRows)
    return;
  const long long row = heavyRows[heavy];
  AttendState<CH, V, L::NQ, typename RowAccumulator<DIM>::Type> s;
  for (long long seg = heavyFirstSegment[heavy]; seg < heavyFirstSegment[heavy + 1]; ++seg) {
#pragma unroll
    for (int q = 0; q < L::NQ; ++q) {
      const int f0 = t.feature(q * L::CPH);
      if (f0 >= F)
        continue;
      SoftmaxStep step{1.0f, 1.0f};
      if constexpr (Softmax) {
        const float *state = partials + numSegments * F + (seg * H + f0 / DIM) * 2;
        step = s.softmax[q].merge(state[0], state[1]);
      }
#pragma unroll
      for (int c = q * L::CPH; c < (q + 1) * L::CPH; ++c)
#pragma unroll
        for (int v = 0; v < V; ++v) {
          const double part = partials[seg * F + t.feature(c) + v];
          s.acc[c][v] = Softmax ? s.acc[c][v] * step.rescale + part * step.weight : s.acc[c][v] + part;
        }
    }
  }
  attendStore<G, V, CH, F, DIM, ODIM, Softmax, SaveValue>(ops, t, s, row);
}

/// A sum over all edges (a parameter's gradient): group u of numRanges takes
/// the CSR positions [u x per, (u + 1) x per), per = ceil(E / numRanges), row
/// by row, and writes its sums to partials[f * numRanges + u]; a finish
/// kernel adds them in a fixed order (the same result on every run, whatever
/// the degrees: a hub's edges are shared among groups like any others).
template <int G, int V, int CH, int F, int DIM, int ODIM, int NT, int NR, typename Index, class Ops>
GNNJIT_DEVICE void attendRanges(const Ops &ops, long long numRows, const Index *__restrict__ offsets,
                                const Index *__restrict__ cols, long long numRanges, float *__restrict__ partials) {
  using L = HeadLayout<G, V, CH, DIM>;
  const SpmmTile<G, V, CH> t;
  const long long unit = t.unit;
  if (unit >= numRanges)
    return;
  const long long edges = offsets[numRows];
  const long long per = (edges + numRanges - 1) / numRanges;
  const long long begin = min(edges, unit * per), end = min(edges, begin + per);
  AttendState<CH, V, L::NQ, double> s;
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
      attendEdges<G, V, CH, F, DIM, ODIM, NT, NR, false>(ops, t, s, r, row, p, rowEnd, cols);
      p = rowEnd;
    }
  }
  forOwnedFeatures<G, V, CH, F>(t, [&](int c, int v, int f) {
    if constexpr (ODIM == 1 && DIM > 1) {
      if (f % DIM == 0) // a per-head sum: one partial per head
        partials[(f / DIM) * numRanges + unit] = (float)s.acc[c][v];
    } else {
      partials[f * numRanges + unit] = (float)s.acc[c][v];
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
