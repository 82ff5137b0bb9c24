"""gnnjit's attention dropout mask written out in Python, independently of the package, for the tests."""

import torch

MASK64 = (1 << 64) - 1


def _mix(z):
    """SplitMix64's finalizer, as gnnjit's attention dropout draws (dsl/AttentionDropout.h)."""
    z = (z + 0x9E3779B97F4A7C15) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def dropout_mask(seed, edge_ids, heads, p):
    """gnnjit's dropout factor of each (edge id, head), written out independently of the package."""
    threshold = min(0xFFFFFFFF, int(p * 2**32 + 0.5))
    mask = torch.zeros(len(edge_ids), heads, dtype=torch.float64)
    for row, e in enumerate(edge_ids):
        for h in range(heads):
            if (_mix((seed & MASK64) ^ _mix(e * heads + h)) >> 32) >= threshold:
                mask[row, h] = 1.0 / (1.0 - p)
    return mask
