// One expression evaluated edge by edge: the per-edge nodes it needs, in
// post order, each with a scratch row reused from edge to edge (memoized
// within one edge, never stored for all edges). Global and per-node operands
// are read from the evaluator's prepared values at the edge's source or
// destination.
#pragma once

#include "ref/Evaluator.h"

namespace gnnjit::ref {

class EdgeProgram {
public:
  /// `root` may have any level; the evaluator must have prepared it.
  EdgeProgram(const Evaluator &evaluator, const dsl::ExprPtr &root);
  EdgeProgram(const EdgeProgram &) = delete;
  EdgeProgram &operator=(const EdgeProgram &) = delete;

  /// The root's value at one edge: root->shape().size() values, valid until
  /// the next call.
  const double *evaluate(const EdgeContext &edge);

private:
  /// Where an operand's row comes from: an earlier step, or a prepared value.
  struct Operand {
    int step = -1;                     ///< index into steps_, or -1
    const NodeValue *value = nullptr;  ///< when step < 0
    bool atSrc = false;                ///< a per-node value read at the source j (else at i)
  };
  struct Step {
    const dsl::ExprNode *node;
    std::vector<Operand> operands;
    double *scratch;     ///< shape().size() values
    const double *result; ///< scratch, or an edge input's row
    const Tensor *edgeInput = nullptr;
    const SoftmaxStats *softmax = nullptr;
    const ArgTable *args = nullptr;
    const dsl::GraphValue *dropout = nullptr; ///< an attention dropout factor
  };

  Operand operandFor(const dsl::ExprNode &node) const;
  const double *read(const Operand &op, const EdgeContext &edge) const;
  void run(Step &step, const EdgeContext &edge);

  const Evaluator &evaluator_;
  const std::vector<float> &weights_;
  std::vector<Step> steps_;
  std::vector<double> scratch_;
  Operand root_;
};

} // namespace gnnjit::ref
