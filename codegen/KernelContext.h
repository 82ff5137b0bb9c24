// How generated kernels read DSL leaves: which C variable holds the node of
// each level, where the CSR position is, and which parameter each input,
// graph quantity and computed aggregate comes from (registered in the
// kernel's ParamList on first use). Shared by every kernel kind.
#pragma once

#include "codegen/EmitExpr.h"
#include "codegen/KernelParams.h"

#include <map>
#include <string>

namespace gnnjit::codegen {

struct LeafPlaces {
  std::string srcNode;   ///< C expression of the node read at Src ("" when none)
  std::string dstNode;   ///< ... at Dst
  std::string position;  ///< CSR position of the edge ("" outside edge loops)
  bool weighted = false; ///< csr_weights exists; otherwise an edge weight reads 1
  /// Aggregates (and other computed nodes) the kernel has in variables:
  /// node -> C expression of the element being computed. Only valid where
  /// the reading expression is element-wise in the node.
  std::map<const dsl::ExprNode *, std::string> inVariables;
  /// Aggregates kept in buffers: node -> buffer index; read at `bufferRow`.
  std::map<const dsl::ExprNode *, int> inBuffers;
  std::string bufferRow; ///< row of a per-node buffer read ("0" for a global one)
  /// Inside an edge loop over the transposed CSR (rows are sources): an
  /// edge's position there is not its incoming position, which a max/min's
  /// saved arg positions hold (peer_positions maps one to the other). Edge
  /// inputs are read at edge_ids[position] either way.
  bool transposed = false;
  /// Max/min aggregations whose saved arg positions the kernel reads: the
  /// forward aggregate node -> the saved buffer's name.
  std::map<const dsl::ExprNode *, std::string> savedArgs;
  /// Forward edge softmaxes whose alpha the kernel recomputes from a saved
  /// log-sum-exp (read at the edge's destination), and forward attention
  /// aggregates read from saved buffers: node -> the saved buffer's name.
  std::map<const dsl::ExprNode *, std::string> savedLse, savedValues;
};

/// The emit context for `places`, registering parameters in `params`.
/// `params` and `places` must outlive the returned context.
ExprEmitContext kernelContext(ParamList &params, const LeafPlaces &places);

/// C parameter names, so every kernel kind spells them alike.
std::string inputParamName(const std::string &input);
std::string inputStrideName(const std::string &input);
std::string outputParamName(const std::string &output);
std::string outputStrideName(const std::string &output);
std::string aggregateParamName(int index);
std::string aggregateStrideName(int index);
std::string savedParamName(const std::string &saved);
std::string savedStrideName(const std::string &saved);

} // namespace gnnjit::codegen
