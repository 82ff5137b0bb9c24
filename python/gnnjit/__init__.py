"""gnnjit: fused, autotuned GPU kernels for graph neural network layers.

The C++ core (gnnjit._core) holds graphs, the layer library and the CPU
reference executor (float64); gnnjit.nn (PyG-compatible layers) and
gnnjit.ops (the torch operators) need torch and are imported on their own.

    import numpy as np, gnnjit
    g = gnnjit.Graph(np.array([[0, 1, 2], [1, 2, 0]]), self_loops="add")
    layer = gnnjit.Layer.from_library("gcn", dim=16)
    out = gnnjit.reference_forward(layer, g, {"x": np.random.rand(3, 16)})["out"]
"""

from gnnjit._core import (
    Error,
    Graph,
    Layer,
    generator_version,
    library,
    load_dataset,
    reference_backward,
    reference_forward,
)

__version__ = "0.1.0"

__all__ = [
    "Error",
    "Graph",
    "Layer",
    "generator_version",
    "library",
    "load_dataset",
    "reference_backward",
    "reference_forward",
]
