// The reduction family's loop skeletons: for every row of a CSR, a max, min,
// sum or mean over the row's edges of a general per-edge message, with the
// arg position of each max/min result (for the backward), then the
// element-wise epilogue. The row mapping is SpMM's (gnnjit/spmm.cuh: a group
// of G lanes per row, V-float vectors, CH chunks per lane, tiles of features
// down the grid's y). A generated module supplies an `Ops` struct:
//
//   void message(float (&m)[V], long long row, Index col, long long p, int f) const;
//       elements f .. f + V - 1 of the message of CSR position p (col -> row)
//   float finish(long long row, int f, float a) const;  the epilogue at element f
//   float *outputRow(long long row) const;               where the row's result goes
//   Index *argRow(long long row) const;                  where its arg positions go
//                                                        (needed only with SaveArgs)
//
// Folding follows the reference executor exactly: edges in CSR order; max
// and min keep the first of equal values (strict comparison), a NaN wins
// over a number, and an empty row gives 0 with arg position -1. Heavy rows
// are split into segments whose partial results (and arg positions) the
// combine kernel folds in segment order by the same rule: no atomics, the
// same result on every run. A max or min may instead merge its segments
// with packed (value, position) 64-bit atomics (gnnjit/packed_atomic.cuh)
// into one slot per (heavy row, element), which a finish kernel decodes:
// the same winner (the order of the packed key is the fold's rule), and
// where the packing loses bits (the sign of a zero, a NaN's payload) the
// winner's message is computed again, by
//   float messageElement(long long row, Index col, long long p, int f) const;
#pragma once

#include "gnnjit/packed_atomic.cuh"
#include "gnnjit/spmm.cuh"

namespace gnnjit::device {

enum ReduceKind { kReduceSum, kReduceMean, kReduceMax, kReduceMin };

template <int R> constexpr bool kHasArgs = R == kReduceMax || R == kReduceMin;

/// Folds value v found at position p into (acc, arg); `first`: the first
/// value of the row (or of the segment).
template <int R> GNNJIT_DEVICE void fold(float &acc, long long &arg, float v, long long p, bool first) {
  if constexpr (kHasArgs<R>) {
    const bool better = first || (R == kReduceMax ? v > acc : v < acc) || (isnan(v) && !isnan(acc));
    if (better) {
      acc = v;
      arg = p;
    }
  } else {
    acc += v;
  }
}

template <int CH, int V> struct ReduceState {
  float acc[CH][V];
  long long arg[CH][V];
  GNNJIT_DEVICE ReduceState() {
#pragma unroll
    for (int c = 0; c < CH; ++c)
#pragma unroll
      for (int v = 0; v < V; ++v) {
        acc[c][v] = 0.0f;
        arg[c][v] = -1;
      }
  }
};

/// Folds the messages of CSR positions [begin, end) of `row` into `s`.
template <int G, int V, int CH, int F, int R, typename Index, class Ops>
GNNJIT_DEVICE void reduceEdges(const Ops &ops, const SpmmTile<G, V, CH> &t, ReduceState<CH, V> &s, long long row,
                               long long begin, long long end, const Index *__restrict__ cols) {
  constexpr int TILE = SpmmTile<G, V, CH>::kTile;
  for (long long base = begin; base < end; base += G) {
    const Index myCol = base + t.lane < end ? cols[base + t.lane] : Index(0);
    const int n = (int)min((long long)G, end - base);
    // Unrolled like spmmAccumulate so several gathers are in flight: the
    // folds depend on each other, the loads do not.
#pragma unroll 8
    for (int k = 0; k < n; ++k) {
      const Index col = __shfl_sync(t.mask, myCol, k, G);
      const long long p = base + k;
#pragma unroll
      for (int c = 0; c < CH; ++c) {
        const int f = t.feature(c);
        if (F % TILE == 0 || f < F) {
          float m[V];
          ops.message(m, row, col, p, f);
#pragma unroll
          for (int v = 0; v < V; ++v)
            fold<R>(s.acc[c][v], s.arg[c][v], m[v], p, p == begin);
        }
      }
    }
  }
}

/// The row's results (a mean divided by the row's size) through the
/// epilogue, and with SaveArgs the arg positions.
template <int G, int V, int CH, int F, int R, bool SaveArgs, typename Index, class Ops>
GNNJIT_DEVICE void reduceStore(const Ops &ops, const SpmmTile<G, V, CH> &t, const ReduceState<CH, V> &s,
                               long long row, long long count) {
  float *out = ops.outputRow(row);
  forOwnedVectors<G, V, CH, F>(t, [&](int c, int f0) {
    float result[V];
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const float a = R == kReduceMean ? (count > 0 ? s.acc[c][v] / (float)count : 0.0f) : s.acc[c][v];
      result[v] = ops.finish(row, f0 + v, a);
    }
    storeResult<V>(out + f0, result);
    if constexpr (SaveArgs) {
      Index *args = ops.argRow(row);
#pragma unroll
      for (int v = 0; v < V; ++v)
        args[f0 + v] = (Index)s.arg[c][v];
    }
  });
}

/// Light rows (all rows when heavyThreshold is 0): a group of G lanes per row.
template <int G, int V, int CH, int F, int R, bool SaveArgs, typename Index, class Ops>
GNNJIT_DEVICE void reduceRows(const Ops &ops, long long numRows, const Index *__restrict__ offsets,
                              const Index *__restrict__ cols, long long heavyThreshold) {
  const SpmmTile<G, V, CH> t;
  const long long row = t.unit;
  if (row >= numRows)
    return; // the whole group leaves together
  const long long begin = offsets[row], end = offsets[row + 1];
  if (heavyThreshold > 0 && end - begin > heavyThreshold)
    return; // split into segments instead
  ReduceState<CH, V> s;
  reduceEdges<G, V, CH, F, R>(ops, t, s, row, begin, end, cols);
  reduceStore<G, V, CH, F, R, SaveArgs, Index>(ops, t, s, row, end - begin);
}

/// Floats of `partials` (and positions of `partialArgs`) per heavy-row
/// segment: its F results (lower::SegmentMerge states it for the host;
/// generated modules check).
template <int F> constexpr long long reduceSegmentFloats() { return F; }

/// One segment of segmentLength edges of a heavy row, folded into its partials.
template <int G, int V, int CH, int F, int R, typename Index, class Ops>
GNNJIT_DEVICE void reduceSegments(const Ops &ops, long long numSegments, const Index *__restrict__ offsets,
                                  const Index *__restrict__ cols, const Index *__restrict__ segmentRows,
                                  const long long *__restrict__ segmentBegins, float *__restrict__ partials,
                                  long long *__restrict__ partialArgs, long long segmentLength) {
  const SpmmTile<G, V, CH> t;
  const long long segment = t.unit;
  if (segment >= numSegments)
    return;
  const long long row = segmentRows[segment];
  const long long begin = segmentBegins[segment];
  const long long end = min(begin + segmentLength, (long long)offsets[row + 1]);
  ReduceState<CH, V> s;
  reduceEdges<G, V, CH, F, R>(ops, t, s, row, begin, end, cols);
  forOwnedFeatures<G, V, CH, F>(t, [&](int c, int v, int f) {
    partials[segment * F + f] = s.acc[c][v];
    if constexpr (kHasArgs<R>)
      partialArgs[segment * F + f] = s.arg[c][v];
  });
}

/// A heavy row: its segments' partial results folded in segment order, then
/// stored like a light row.
template <int G, int V, int CH, int F, int R, bool SaveArgs, typename Index, class Ops>
GNNJIT_DEVICE void reduceCombine(const Ops &ops, long long numHeavyRows, const Index *__restrict__ offsets,
                                 const Index *__restrict__ heavyRows, const long long *__restrict__ heavyFirstSegment,
                                 const float *__restrict__ partials, const long long *__restrict__ partialArgs) {
  const SpmmTile<G, V, CH> t;
  const long long heavy = t.unit;
  if (heavy >= numHeavyRows)
    return;
  const long long row = heavyRows[heavy];
  const long long first = heavyFirstSegment[heavy];
  ReduceState<CH, V> s;
  for (long long seg = first; seg < heavyFirstSegment[heavy + 1]; ++seg)
    forOwnedFeatures<G, V, CH, F>(t, [&](int c, int v, int f) {
      const long long p = kHasArgs<R> ? partialArgs[seg * F + f] : 0;
      fold<R>(s.acc[c][v], s.arg[c][v], partials[seg * F + f], p, seg == first);
    });
  reduceStore<G, V, CH, F, R, SaveArgs, Index>(ops, t, s, row, offsets[row + 1] - offsets[row]);
}

/// The packed encoding of a max or min (positions as offsets in the row,
/// below 2^31: the plan's rowEdgeLimit, checked once per graph). A heavy
/// row has F slots, set to the encoding's kEmpty before its segments run
/// (the plan's SegmentMerge::fill in every byte; generated modules check).
template <int R> struct PackedFor {
  using Type = PackedMin;
};
template <> struct PackedFor<kReduceMax> {
  using Type = PackedMax;
};
template <int R> using PackedOf = typename PackedFor<R>::Type;

/// One segment of a heavy max/min row, folded like reduceSegments, then
/// merged into the row's packed slots (packed[heavy * F + f], set to the
/// empty state first) by one atomic per element.
template <int G, int V, int CH, int F, int R, typename Index, class Ops>
GNNJIT_DEVICE void reduceSegmentsPacked(const Ops &ops, long long numSegments, const Index *__restrict__ offsets,
                                        const Index *__restrict__ cols, const Index *__restrict__ segmentRows,
                                        const long long *__restrict__ segmentBegins,
                                        const long long *__restrict__ segmentHeavy,
                                        unsigned long long *__restrict__ packed, long long segmentLength) {
  static_assert(kHasArgs<R>, "packed merges are for max and min");
  const SpmmTile<G, V, CH> t;
  const long long segment = t.unit;
  if (segment >= numSegments)
    return;
  const long long row = segmentRows[segment];
  const long long rowBegin = offsets[row], begin = segmentBegins[segment];
  const long long end = min(begin + segmentLength, (long long)offsets[row + 1]);
  ReduceState<CH, V> s;
  reduceEdges<G, V, CH, F, R>(ops, t, s, row, begin, end, cols);
  unsigned long long *slots = packed + segmentHeavy[segment] * F;
  forOwnedFeatures<G, V, CH, F>(t, [&](int c, int v, int f) {
    PackedOf<R>::atomic(slots + f, PackedOf<R>::pack(s.acc[c][v], (int)(s.arg[c][v] - rowBegin)));
  });
}

/// A heavy max/min row: its packed slots decoded, then stored like a light
/// row. A zero or NaN winner is read again from its message (the packing
/// made -0 +0 and NaNs one NaN); the decoded value stays should that read
/// differ in anything but those bits.
template <int G, int V, int CH, int F, int R, bool SaveArgs, typename Index, class Ops>
GNNJIT_DEVICE void reduceCombinePacked(const Ops &ops, long long numHeavyRows, const Index *__restrict__ offsets,
                                       const Index *__restrict__ cols, const Index *__restrict__ heavyRows,
                                       const unsigned long long *__restrict__ packed) {
  const SpmmTile<G, V, CH> t;
  const long long heavy = t.unit;
  if (heavy >= numHeavyRows)
    return;
  const long long row = heavyRows[heavy];
  const long long begin = offsets[row];
  ReduceState<CH, V> s;
  forOwnedFeatures<G, V, CH, F>(t, [&](int c, int v, int f) {
    const unsigned long long slot = packed[heavy * F + f];
    const float value = PackedOf<R>::value(slot);
    const long long p = begin + PackedOf<R>::index(slot);
    float exact = value;
    if (value == 0.0f || isnan(value)) {
      const float again = ops.messageElement(row, cols[p], p, f);
      if (again == value || (isnan(again) && isnan(value)))
        exact = again;
    }
    s.acc[c][v] = exact;
    s.arg[c][v] = p;
  });
  reduceStore<G, V, CH, F, R, SaveArgs, Index>(ops, t, s, row, offsets[row + 1] - begin);
}

} // namespace gnnjit::device
