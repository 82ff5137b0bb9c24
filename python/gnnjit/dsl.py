"""Layers of your own, in gnnjit's DSL from Python (the C++ builder's API, dsl/Layer.h and dsl/Ops.h):

    import math, gnnjit.dsl as G
    b = G.LayerBuilder("gated_difference")
    x = b.node_input("x", (heads, dim))                     # .src is x_j, .dst is x_i on each edge j -> i
    a, bias = b.param("a", (heads, dim)), b.param("bias", (heads, dim))
    gate = G.sigmoid(G.dot(x.src, a) + G.dot(x.dst, x.src) / math.sqrt(dim))
    b.output("out", G.aggregate("mean", gate * (x.src - x.dst)) + bias)
    layer = b.build()                                       # a gnnjit.Layer; gnnjit.Error says what is wrong
    conv = G.Module(layer)                                  # a torch module: parameters a and bias
    out = conv(edge_index, x=features)                      # forward and backward, CPU or CUDA
    layer.export("gated-kernels")                           # its generated .cu files

Module needs torch; the builder does not.
"""

from __future__ import annotations

import math
from typing import Optional

from gnnjit._core.dsl import (  # noqa: F401
    Expr,
    LayerBuilder,
    NodeInput,
    abs,
    aggregate,
    attention_dropout,
    concat_heads,
    dot,
    edge_softmax,
    edge_weight,
    elu,
    exp,
    greater,
    greater_equal,
    in_degree,
    leaky_relu,
    log,
    maximum,
    mean_heads,
    minimum,
    out_degree,
    relu,
    rsqrt,
    scale,
    select,
    sigmoid,
    split_heads,
    sqrt,
    sum,
    tanh,
    weighted_in_degree,
)

try:
    import torch
except ImportError:  # the builder works without torch
    torch = None


def _module_base():
    return torch.nn.Module if torch is not None else object


class Module(_module_base()):
    """A torch module running a DSL layer: one torch.nn.Parameter per parameter input (shape (heads, dim), or
    (dim,) with one head), reset uniform in +-1/sqrt(size); forward(edge_index, num_nodes=None, edge_weight=None,
    **inputs) takes the node inputs ([num_nodes, size] or [num_nodes, heads, dim]) and edge inputs (one row per
    edge_index column) by name and returns the output (a dict when the layer has several). A layer with
    attention_dropout draws a fresh seed each call (gnnjit.ops.dropout_seed); use it for training and a layer
    without dropout for inference."""

    def __init__(self, layer, self_loops: str = "keep"):
        if torch is None:
            raise ImportError("gnnjit.dsl.Module needs torch")
        from gnnjit import ops

        super().__init__()
        self.layer, self.self_loops = layer, self_loops
        self._described = ops._described(ops.custom_spec(layer))  # made once: torch.compile reads it as a constant
        self._params = [i for i in layer.inputs if i["kind"] == "param"]
        self._data = [i for i in layer.inputs if i["kind"] != "param"]
        for p in self._params:
            shape = (p["heads"], p["dim"]) if p["heads"] > 1 else (p["dim"],)
            self.register_parameter(p["name"], torch.nn.Parameter(torch.empty(shape)))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for p in self._params:
            bound = 1.0 / math.sqrt(p["size"])
            with torch.no_grad():
                getattr(self, p["name"]).uniform_(-bound, bound)

    def forward(self, edge_index, num_nodes: Optional[int] = None, edge_weight=None, **inputs):
        from gnnjit.ops import dropout_seed, run_described

        tensors = {n: t.reshape(t.size(0), -1) for n, t in inputs.items()}
        if num_nodes is None:  # the rows of the first node input given (run_described names any missing)
            nodes = [tensors[i["name"]].size(0) for i in self._data if i["kind"] == "node" and i["name"] in tensors]
            num_nodes = nodes[0] if nodes else int(edge_index.max()) + 1
        tensors.update({p["name"]: getattr(self, p["name"]) for p in self._params})
        seed = dropout_seed() if self._described[5] else None
        outputs = run_described(self._described, edge_index, num_nodes, tensors, edge_weight, self.self_loops, seed)
        return next(iter(outputs.values())) if len(outputs) == 1 else outputs

    def export(self, folder: str, arch: Optional[str] = None, backward: bool = True) -> dict:
        """Writes the layer's kernels (.cu, .ptx, plan.json) into folder, as `gnnjit export` does."""
        return self.layer.export(folder, arch, backward)

    def extra_repr(self) -> str:
        return f"{self.layer.name}, self_loops={self.self_loops!r}"
