"""Runs PyG 2.8's own layer tests (copied here unchanged) against gnnjit.nn: the nine classes gnnjit.nn
implements are swapped into torch_geometric.nn before the test modules import them.

GNNJIT_CONFORMANCE_BACKEND=pyg leaves PyG's classes in place (the same tests against PyG itself: the baseline
that says which tests hold for the installed PyG at all). Tests of classes and functions gnnjit does not
implement (GINEConv, DynamicEdgeConv, gcn_norm) are deselected: they would measure PyG, not gnnjit.

GNNJIT_CONFORMANCE_DEVICE=cuda makes CUDA torch's default device, so the tests' tensors and modules are made on
the GPU and gnnjit runs its generated kernels (float32) instead of the CPU reference executor."""

import os

import pytest
import torch
import torch_geometric.nn

BACKEND = os.environ.get("GNNJIT_CONFORMANCE_BACKEND", "gnnjit")
LAYERS = ["GCNConv", "GraphConv", "SAGEConv", "GINConv", "GATConv", "GATv2Conv", "TransformerConv", "AGNNConv",
          "EdgeConv"]

if BACKEND == "gnnjit":
    import gnnjit.nn

    for name in LAYERS:
        setattr(torch_geometric.nn, name, getattr(gnnjit.nn, name))
        setattr(torch_geometric.nn.conv, name, getattr(gnnjit.nn, name))
elif BACKEND != "pyg":
    raise ValueError(f"GNNJIT_CONFORMANCE_BACKEND is gnnjit or pyg, not {BACKEND!r}")

DEVICE = os.environ.get("GNNJIT_CONFORMANCE_DEVICE", "cpu")
if DEVICE != "cpu":
    torch.set_default_device(DEVICE)

NOT_GNNJIT = {
    "test_gine_conv": "GINEConv",
    "test_gine_conv_edge_dim": "GINEConv",
    "test_static_gine_conv": "GINEConv",
    "test_dynamic_edge_conv": "DynamicEdgeConv",
    "test_gcn_norm_gradient": "the function gcn_norm",
}


def pytest_collection_modifyitems(config, items):
    kept, dropped = [], []
    for item in items:
        (dropped if item.originalname in NOT_GNNJIT else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def pytest_report_header(config):
    return f"PyG conformance: {BACKEND}'s classes for {', '.join(LAYERS)}, on {DEVICE}"
