// Compressed sparse rows with one index type for offsets, indices and edge
// ids: int32 when every value fits, int64 otherwise (what cuSPARSE and the
// generated kernels want). All offset arithmetic on the host is 64-bit.
#pragma once

#include <cstdint>
#include <string_view>
#include <variant>
#include <vector>

namespace gnnjit::graph {

enum class IndexType : uint8_t { Int32, Int64 };

std::string_view indexTypeName(IndexType type);

template <typename Index> struct CsrArrays {
  using IndexT = Index;
  std::vector<Index> offsets; ///< numRows + 1 entries
  std::vector<Index> indices; ///< the other endpoint of each edge, ascending within a row
  std::vector<Index> edgeIds; ///< original edge id of the edge stored at each position
  /// Only in a transposed CSR: where the same edge sits in the CSR it was
  /// transposed from (so per-edge values in that order can be read).
  std::vector<Index> peerPositions;
};

class Csr {
public:
  Csr() = default;
  template <typename Index>
  Csr(CsrArrays<Index> arrays, std::vector<float> weights)
      : arrays_(std::move(arrays)), weights_(std::move(weights)) {}

  /// Calls fn(const CsrArrays<Index>&) with the stored index type, so hot
  /// loops are written once and compiled for both.
  template <typename Fn> decltype(auto) visit(Fn &&fn) const { return std::visit(fn, arrays_); }

  IndexType indexType() const {
    return std::holds_alternative<CsrArrays<int32_t>>(arrays_) ? IndexType::Int32 : IndexType::Int64;
  }
  int64_t numRows() const {
    return visit([](const auto &a) { return static_cast<int64_t>(a.offsets.size()) - 1; });
  }
  int64_t numEdges() const {
    return visit([](const auto &a) { return static_cast<int64_t>(a.indices.size()); });
  }

  // Convenience accessors for code that is not hot (tests, small tools).
  int64_t rowBegin(int64_t row) const { return at(&CsrArrays<int32_t>::offsets, &CsrArrays<int64_t>::offsets, row); }
  int64_t rowEnd(int64_t row) const { return rowBegin(row + 1); }
  int64_t degree(int64_t row) const { return rowEnd(row) - rowBegin(row); }
  int64_t index(int64_t pos) const { return at(&CsrArrays<int32_t>::indices, &CsrArrays<int64_t>::indices, pos); }
  int64_t edgeId(int64_t pos) const { return at(&CsrArrays<int32_t>::edgeIds, &CsrArrays<int64_t>::edgeIds, pos); }
  int64_t peerPosition(int64_t pos) const {
    return at(&CsrArrays<int32_t>::peerPositions, &CsrArrays<int64_t>::peerPositions, pos);
  }

  bool hasWeights() const { return !weights_.empty(); }
  /// One weight per stored edge, in CSR order; empty when unweighted.
  const std::vector<float> &weights() const { return weights_; }

private:
  template <typename M32, typename M64> int64_t at(M32 m32, M64 m64, int64_t i) const {
    if (const auto *a = std::get_if<CsrArrays<int32_t>>(&arrays_))
      return (a->*m32)[static_cast<size_t>(i)];
    return (std::get<CsrArrays<int64_t>>(arrays_).*m64)[static_cast<size_t>(i)];
  }

  std::variant<CsrArrays<int32_t>, CsrArrays<int64_t>> arrays_;
  std::vector<float> weights_;
};

} // namespace gnnjit::graph
