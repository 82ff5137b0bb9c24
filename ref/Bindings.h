// Checks the tensors a caller binds to a layer's inputs: the user's side of
// the executor's contract, so every mistake is a UserError that names the
// input, the expected and given shape, and what the rows mean.
#pragma once

#include "dsl/Expr.h"
#include "graph/Graph.h"
#include "ref/Tensor.h"

#include <string_view>
#include <vector>

namespace gnnjit::ref {

/// Rows a binding of `decl` has: numNodes, numEdges or 1.
int64_t bindingRows(const dsl::InputDecl &decl, const graph::Graph &graph);

/// `given` must bind every input of `inputs` and `outputGradients` (backward
/// only) and nothing else, each rows x (heads * dim) with rows as
/// bindingRows(), and hold rows * cols values. Throws UserError otherwise.
void checkBindings(std::string_view layerName, const std::vector<dsl::InputPtr> &inputs,
                   const std::vector<dsl::InputPtr> &outputGradients, const graph::Graph &graph,
                   const TensorMap &given);

} // namespace gnnjit::ref
