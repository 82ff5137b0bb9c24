// The SpMM family's loop skeletons: for every row of a CSR, the sum (or
// mean) of weight(edge) * value(column node) over the row, then an
// element-wise epilogue. A generated module supplies only what the layer
// defines, as an `Ops` struct of __device__ members (codegen/SpmmKernel.cpp):
//
//   float rowScale(long long row, long long begin, long long end) const;
//       the row's scalar factor, applied after the sum (1 / size for a mean)
//   float edgeWeight(long long row, Index col, long long p) const;
//       the scalar weight of CSR position p (edge col -> row)
//   void gather(float (&acc)[V], float w, long long row, Index col, long long p, int f) const;
//       acc[v] += w * value(col)[f + v] (times any per-element weight)
//   float finish(long long row, int f, float a) const;
//       element f of the result from the scaled sum a (per-element row
//       factors and the fused epilogue)
//   float *outputRow(long long row) const;   where the row's result goes
//
// Mapping: a group of G lanes owns a row; lane l holds features l * V + k *
// G * V (k < CH) in registers, so one pass over the row's edges serves all
// features of a tile of TILE = G * V * CH floats (blockIdx.y picks the
// tile). The group loads G column indices and weights at once, one per lane,
// and passes them round with shuffles: index loads are amortised over the
// features and several gathers are in flight per lane. Rows longer than
// HEAVY edges go to spmmSegments (segments of SEGMENT edges, each summed
// into partials) and spmmCombine (a row's partials added in segment order:
// deterministic, no float atomics).
#pragma once

#include "gnnjit/vector_load.cuh"
#include "gnnjit/warp.cuh"

namespace gnnjit::device {

template <int G, int V, int CH> struct SpmmTile {
  static constexpr int kTile = G * V * CH;
  long long unit;  ///< the row (segment, heavy row) this group owns
  int lane;        ///< within the group
  unsigned mask;   ///< the group's lanes
  int tile0;       ///< the tile's first feature
  GNNJIT_DEVICE SpmmTile()
      : unit((blockIdx.x * (long long)blockDim.x + threadIdx.x) / G), lane(groupLane<G>()), mask(groupMask<G>()),
        tile0(blockIdx.y * kTile) {}
  /// Feature of vector c of this lane.
  GNNJIT_DEVICE int feature(int c) const { return tile0 + (c * G + lane) * V; }
};

/// fn(c, v, f) for every feature f < F this lane holds (vector c, lane v).
template <int G, int V, int CH, int F, class Fn>
GNNJIT_DEVICE void forOwnedFeatures(const SpmmTile<G, V, CH> &t, Fn fn) {
#pragma unroll
  for (int c = 0; c < CH; ++c)
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const int f = t.feature(c) + v;
      if (f < F)
        fn(c, v, f);
    }
}

template <int CH, int V> GNNJIT_DEVICE void zeroAccumulators(float (&acc)[CH][V]) {
#pragma unroll
  for (int c = 0; c < CH; ++c)
#pragma unroll
    for (int v = 0; v < V; ++v)
      acc[c][v] = 0.0f;
}

/// acc += weight * value over CSR positions [begin, end) of `row`.
template <int G, int V, int CH, int F, typename Index, class Ops>
GNNJIT_DEVICE void spmmAccumulate(const Ops &ops, const SpmmTile<G, V, CH> &t, float (&acc)[CH][V], long long row,
                                  long long begin, long long end, const Index *__restrict__ cols) {
  constexpr int TILE = SpmmTile<G, V, CH>::kTile;
  for (long long base = begin; base < end; base += G) {
    Index myCol = 0;
    float myWeight = 0.0f;
    if (base + t.lane < end) {
      const long long p = base + t.lane;
      myCol = cols[p];
      myWeight = ops.edgeWeight(row, myCol, p);
    }
    const int n = (int)min((long long)G, end - base);
#pragma unroll 8
    for (int k = 0; k < n; ++k) {
      const Index col = __shfl_sync(t.mask, myCol, k, G);
      const float w = __shfl_sync(t.mask, myWeight, k, G);
      const long long p = base + k;
#pragma unroll
      for (int c = 0; c < CH; ++c) {
        const int f = t.feature(c);
        if (F % TILE == 0 || f < F) // constant when tiles cover F exactly
          ops.gather(acc[c], w, row, col, p, f);
      }
    }
  }
}

/// fn(c, f0) for each vector c of this lane whose first feature f0 is < F.
template <int G, int V, int CH, int F, class Fn>
GNNJIT_DEVICE void forOwnedVectors(const SpmmTile<G, V, CH> &t, Fn fn) {
  constexpr int TILE = SpmmTile<G, V, CH>::kTile;
#pragma unroll
  for (int c = 0; c < CH; ++c) {
    const int f0 = t.feature(c);
    if (F % TILE == 0 || f0 < F) // constant when tiles cover F exactly
      fn(c, f0);
  }
}

/// One vector store when V > 1 (then F % V == 0 and rows of the output are
/// F floats apart, so every vector is aligned), else one float.
template <int V> GNNJIT_DEVICE void storeResult(float *out, const float (&result)[V]) {
  if constexpr (V > 1)
    storeVecAligned<float, V>(out, result);
  else
    out[0] = result[0];
}

/// Applies scale and the epilogue to the sums and writes the row's tile.
template <int G, int V, int CH, int F, class Ops>
GNNJIT_DEVICE void spmmStore(const Ops &ops, const SpmmTile<G, V, CH> &t, const float (&acc)[CH][V], long long row,
                             float scale) {
  float *out = ops.outputRow(row);
  forOwnedVectors<G, V, CH, F>(t, [&](int c, int f0) {
    float result[V];
#pragma unroll
    for (int v = 0; v < V; ++v)
      result[v] = ops.finish(row, f0 + v, acc[c][v] * scale);
    storeResult<V>(out + f0, result);
  });
}

/// Light rows (all rows when heavyThreshold is 0): a group of G lanes per row.
template <int G, int V, int CH, int F, typename Index, class Ops>
GNNJIT_DEVICE void spmmRows(const Ops &ops, long long numRows, const Index *__restrict__ offsets,
                            const Index *__restrict__ cols, long long heavyThreshold) {
  const SpmmTile<G, V, CH> t;
  const long long row = t.unit;
  if (row >= numRows)
    return; // the whole group leaves together
  const long long begin = offsets[row], end = offsets[row + 1];
  if (heavyThreshold > 0 && end - begin > heavyThreshold)
    return; // split into segments instead
  const float scale = ops.rowScale(row, begin, end); // before the loop: its loads overlap the gathers
  float acc[CH][V];
  zeroAccumulators(acc);
  spmmAccumulate<G, V, CH, F>(ops, t, acc, row, begin, end, cols);
  spmmStore<G, V, CH, F>(ops, t, acc, row, scale);
}

/// One segment of segmentLength edges of a heavy row, summed into its partials row.
template <int G, int V, int CH, int F, typename Index, class Ops>
GNNJIT_DEVICE void spmmSegments(const Ops &ops, long long numSegments, const Index *__restrict__ offsets,
                                const Index *__restrict__ cols, const Index *__restrict__ segmentRows,
                                const long long *__restrict__ segmentBegins, float *__restrict__ partials,
                                long long segmentLength) {
  const SpmmTile<G, V, CH> t;
  const long long segment = t.unit;
  if (segment >= numSegments)
    return;
  const long long row = segmentRows[segment];
  const long long begin = segmentBegins[segment];
  const long long end = min(begin + segmentLength, (long long)offsets[row + 1]);
  float acc[CH][V];
  zeroAccumulators(acc);
  spmmAccumulate<G, V, CH, F>(ops, t, acc, row, begin, end, cols);
  forOwnedFeatures<G, V, CH, F>(t, [&](int c, int v, int f) { partials[segment * F + f] = acc[c][v]; });
}

/// Floats of `partials` per heavy-row segment: the F sums of its edges
/// (lower::SegmentMerge states it for the host; generated modules check).
template <int F> constexpr long long spmmSegmentFloats() { return F; }

/// A heavy row: its segments' partials added in segment order (the same
/// result on every run), then scaled and stored like a light row.
template <int G, int V, int CH, int F, typename Index, class Ops>
GNNJIT_DEVICE void spmmCombine(const Ops &ops, long long numHeavyRows, const Index *__restrict__ offsets,
                               const Index *__restrict__ heavyRows, const long long *__restrict__ heavyFirstSegment,
                               const float *__restrict__ partials) {
  const SpmmTile<G, V, CH> t;
  const long long heavy = t.unit;
  if (heavy >= numHeavyRows)
    return;
  const long long row = heavyRows[heavy];
  const long long begin = offsets[row], end = offsets[row + 1];
  const float scale = ops.rowScale(row, begin, end);
  float acc[CH][V];
  zeroAccumulators(acc);
  for (long long s = heavyFirstSegment[heavy]; s < heavyFirstSegment[heavy + 1]; ++s)
    forOwnedFeatures<G, V, CH, F>(t, [&](int c, int v, int f) { acc[c][v] += partials[s * F + f]; });
  spmmStore<G, V, CH, F>(ops, t, acc, row, scale);
}

/// cuSPARSE's matrix values: ops.edgeValue(row, col, p, begin, end) at every
/// CSR position, a warp per row.
template <typename Index, class Ops>
GNNJIT_DEVICE void spmmValues(const Ops &ops, long long numRows, const Index *__restrict__ offsets,
                              const Index *__restrict__ cols, float *__restrict__ values) {
  const long long row = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32;
  if (row >= numRows)
    return;
  const int lane = threadIdx.x % 32;
  const long long begin = offsets[row], end = offsets[row + 1];
  for (long long p = begin + lane; p < end; p += 32)
    values[p] = ops.edgeValue(row, cols[p], p, begin, end);
}

} // namespace gnnjit::device
