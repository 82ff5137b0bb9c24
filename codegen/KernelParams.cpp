#include "codegen/KernelParams.h"

#include "support/Error.h"

#include <fmt/format.h>

namespace gnnjit::codegen {

std::string_view paramKindName(ParamKind kind) {
  switch (kind) {
  case ParamKind::RowOffsets:
    return "row_offsets";
  case ParamKind::ColIndices:
    return "col_indices";
  case ParamKind::CsrWeights:
    return "csr_weights";
  case ParamKind::NumRows:
    return "num_rows";
  case ParamKind::NodeQuantity:
    return "node_quantity";
  case ParamKind::InputData:
    return "input";
  case ParamKind::InputStride:
    return "input_stride";
  case ParamKind::AggregateData:
    return "aggregate";
  case ParamKind::AggregateStride:
    return "aggregate_stride";
  case ParamKind::OutputData:
    return "output";
  case ParamKind::OutputStride:
    return "output_stride";
  case ParamKind::Partials:
    return "partials";
  case ParamKind::NumPartials:
    return "num_partials";
  case ParamKind::SegmentRows:
    return "segment_rows";
  case ParamKind::SegmentBegins:
    return "segment_begins";
  case ParamKind::NumSegments:
    return "num_segments";
  case ParamKind::HeavyRows:
    return "heavy_rows";
  case ParamKind::HeavyFirstSegment:
    return "heavy_first_segment";
  case ParamKind::NumHeavyRows:
    return "num_heavy_rows";
  case ParamKind::EdgeValues:
    return "edge_values";
  case ParamKind::EdgeIds:
    return "edge_ids";
  case ParamKind::PeerPositions:
    return "peer_positions";
  case ParamKind::SavedData:
    return "saved";
  case ParamKind::SavedStride:
    return "saved_stride";
  case ParamKind::PartialArgs:
    return "partial_args";
  case ParamKind::FixedPointSums:
    return "fixed_point_sums";
  case ParamKind::FixedPointScale:
    return "fixed_point_scale";
  case ParamKind::FixedPointTerms:
    return "fixed_point_terms";
  case ParamKind::SegmentHeavy:
    return "segment_heavy";
  case ParamKind::PackedResults:
    return "packed_results";
  case ParamKind::SumPartials:
    return "sum_partials";
  case ParamKind::NumSumPartials:
    return "num_sum_partials";
  case ParamKind::SumPartialBase:
    return "sum_partial_base";
  case ParamKind::HeavyThreshold:
    return "heavy_threshold";
  case ParamKind::SegmentLength:
    return "segment_length";
  case ParamKind::RandomSeed:
    return "random_seed";
  }
  return "?";
}

std::string ParamList::add(KernelParam param) {
  for (const KernelParam &p : params_)
    if (p.kind == param.kind && p.ref == param.ref && p.scratch == param.scratch)
      return p.name;
  for (const KernelParam &p : params_)
    if (p.name == param.name)
      throwInternalError("kernel parameter name {} used for two things", param.name);
  params_.push_back(std::move(param));
  return params_.back().name;
}

std::string ParamList::use(ParamKind kind, std::string ref, std::string name, std::string ctype) {
  return add({kind, std::move(ref), -1, std::move(name), std::move(ctype)});
}

std::string ParamList::useScratch(ParamKind kind, int scratch, std::string name, std::string ctype) {
  if (kind != ParamKind::AggregateData && kind != ParamKind::AggregateStride)
    throwInternalError("kernel parameter {} of a scratch buffer", name);
  return add({kind, "", scratch, std::move(name), std::move(ctype)});
}

std::string ParamList::signature() const {
  std::string s;
  for (const KernelParam &p : params_)
    s += fmt::format("{}{} {}", s.empty() ? "" : ", ", p.ctype, p.name);
  return s;
}

std::string ParamList::names() const {
  std::string s;
  for (const KernelParam &p : params_)
    s += fmt::format("{}{}", s.empty() ? "" : ", ", p.name);
  return s;
}

std::string ParamList::members() const {
  std::string s;
  for (const KernelParam &p : params_)
    s += fmt::format("{} {};\n", p.ctype, p.name);
  return s;
}

void ParamList::append(const ParamList &other) {
  for (const KernelParam &p : other.params())
    add(p);
}

} // namespace gnnjit::codegen
