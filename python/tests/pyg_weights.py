"""PyG's layer and gnnjit.nn's built the same way, in float64, PyG's weights (perturbed, so a dropped bias shows)
loaded into gnnjit's: what the comparisons against PyG start from."""

import torch
import torch_geometric.nn as pyg

import gnnjit.nn


def pair(make):
    torch.manual_seed(1)
    theirs, ours = make(pyg).double(), make(gnnjit.nn).double()
    with torch.no_grad():
        for p in theirs.parameters():
            p.add_(0.1 * torch.randn_like(p))
    ours.load_state_dict(theirs.state_dict())
    return theirs, ours
