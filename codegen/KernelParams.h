// The parameters of a generated kernel, recorded while its body is emitted:
// each says what the executor binds to it (a CSR array, a node quantity, an
// input, an aggregate buffer, an output), so launching needs no per-kernel
// host code. Every parameter is 8 bytes: a pointer or a long long.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gnnjit::codegen {

enum class ParamKind : uint8_t {
  RowOffsets,    ///< CSR offsets of the rows the kernel walks
  ColIndices,    ///< CSR column of each position
  CsrWeights,    ///< the graph's edge weight at each CSR position
  NumRows,       ///< long long: rows of the grid (nodes, or 1 for global values)
  NodeQuantity,  ///< float per node; `ref` names the dsl::GraphQuantity
  InputData,     ///< float rows of the input `ref`
  InputStride,   ///< long long row stride (floats) of the input `ref`
  AggregateData, ///< float rows of scratch buffer `scratch` (lower::PassPlan::scratch)
  AggregateStride,
  OutputData, ///< float rows of the output `ref` (a layer output or a gradient)
  OutputStride,
  Partials,          ///< float scratch rows of a two-pass reduction or of row segments
  NumPartials,       ///< long long: rows of Partials
  SegmentRows,       ///< heavy-row segments: the row of each (index type)
  SegmentBegins,     ///< long long: the first CSR position of each segment
  NumSegments,       ///< long long
  HeavyRows,         ///< rows split into segments (index type)
  HeavyFirstSegment, ///< long long, one more than HeavyRows: each heavy row's first segment
  NumHeavyRows,      ///< long long
  EdgeValues,        ///< float per CSR position, written (cuSPARSE's matrix values)
  EdgeIds,           ///< the edge id of each CSR position (index type)
  PeerPositions,     ///< per position of the transposed CSR, its position in the incoming CSR
  SavedData,         ///< rows of the saved buffer `ref` (values the forward keeps for the backward)
  SavedStride,       ///< long long row stride of the saved buffer `ref`
  PartialArgs,       ///< long long scratch: the arg position of each partial result of row segments
  FixedPointSums,    ///< long long scratch: integer sums of an arg scatter, one per (row, element)
  FixedPointScale,   ///< one double on the device: the scale of those integers (a power of two)
  FixedPointTerms,   ///< long long: the most contributions one of those sums adds (the graph's largest out-degree)
  SegmentHeavy,      ///< long long: the heavy row (its index among HeavyRows) of each segment
  PackedResults,     ///< unsigned long long scratch: packed (value, position) per (heavy row, element)
  SumPartials,       ///< float scratch: per-group partials of an attention step's sums over all edges
  NumSumPartials,    ///< long long: the groups writing SumPartials (its rows of elements)
  SumPartialBase,    ///< long long: the first partial this kernel's groups write
  HeavyThreshold,    ///< long long: rows with more edges than this go to segments (the step's tiling)
  SegmentLength,     ///< long long: edges per heavy-row segment (the step's tiling)
  RandomSeed,        ///< unsigned long long: the call's seed of attention dropout
};
std::string_view paramKindName(ParamKind kind);

struct KernelParam {
  ParamKind kind;
  std::string ref;   ///< what the kind refers to by name (an input, output, saved buffer, node quantity)
  int scratch = -1;  ///< AggregateData, AggregateStride: the scratch buffer's index in the plan
  std::string name;  ///< the C parameter name
  std::string ctype; ///< its C type
};

/// Parameters in the order they were first asked for (deterministic,
/// because emission is). Asking twice for the same (kind, ref) gives the
/// same name.
class ParamList {
public:
  std::string use(ParamKind kind, std::string ref, std::string name, std::string ctype);
  /// The same for a parameter of scratch buffer `scratch` (AggregateData or
  /// AggregateStride).
  std::string useScratch(ParamKind kind, int scratch, std::string name, std::string ctype);
  const std::vector<KernelParam> &params() const { return params_; }
  /// "const float* __restrict__ x, long long x_ld, ...".
  std::string signature() const;
  /// "x, x_ld, ...": the names in order, to pass them on.
  std::string names() const;
  /// One member declaration per parameter ("const float* __restrict__ x;"),
  /// for the struct a kernel hands a device skeleton.
  std::string members() const;
  /// Uses every parameter of `other` too, in its order.
  void append(const ParamList &other);

private:
  std::string add(KernelParam param);
  std::vector<KernelParam> params_;
};

/// One entry point of a generated module and what to bind to it.
struct GeneratedKernel {
  std::string entry;
  std::vector<KernelParam> params;
  int blockThreads = 256;
};

/// One generated source (one NVRTC compile) and its entry points.
struct GeneratedModule {
  std::string name;   ///< file stem: "<layer>_<pass>_<what>"
  std::string source; ///< with provenance header
  std::vector<GeneratedKernel> kernels;
};

} // namespace gnnjit::codegen
