"""What gnnjit.ops checks of a call's arguments before it runs anything: the inputs a layer takes, by name,
with a seed where it drops attention coefficients; tensors on one device, of the dtypes that device runs."""

from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

from gnnjit import _core
from gnnjit._layers import io

CPU_DTYPES = (torch.float32, torch.float64)
CUDA_DTYPES = (torch.float32,)


def check_inputs(described: tuple, inputs: dict, seed: Optional[Tensor]) -> None:
    """The inputs given by name are the layer's (described as gnnjit._layers.described), with a seed where it
    drops attention coefficients."""
    _, name, names, _, _, drops = described
    if drops and seed is None:
        raise _core.Error(
            f"layer {name} drops attention coefficients: give each call a seed (gnnjit.ops.dropout_seed()), and "
            "build the layer without dropout for inference"
        )
    missing = [n for n in names if n not in inputs]
    extra = [n for n in inputs if n not in names]
    if missing or extra:
        raise _core.Error(
            f"layer {name} takes inputs {list(names)}"
            + (f"; missing {missing}" if missing else "")
            + (f"; not inputs of it: {extra}" if extra else "")
        )


def check_tensors(spec: str, tensors: list[Tensor]) -> None:
    """The tensors (in the layer's input order) are on one CUDA or CPU device, of a dtype it runs."""
    first = tensors[0]
    if first.is_cuda:  # every call's case, checked with the cheapest calls; anything else gets the full check
        index = first.get_device()
        if all(t.dtype is torch.float32 and t.is_cuda and t.get_device() == index for t in tensors):
            return
    name, inputs, _ = io(spec)
    device = tensors[0].device
    if device.type not in ("cuda", "cpu"):
        raise NotImplementedError(f"layer {name}: tensors on {device}; gnnjit runs CUDA and CPU tensors")
    cuda = device.type == "cuda"
    for input_name, t in zip(inputs, tensors):
        if t.device != device:
            raise _core.Error(
                f"layer {name}: input '{input_name}' is on {t.device}, input '{inputs[0]}' on {device}; give every "
                "input on one device"
            )
        if cuda and t.dtype not in CUDA_DTYPES:
            raise _core.Error(
                f"layer {name}: input '{input_name}' is {t.dtype}; gnnjit's CUDA kernels take float32 tensors "
                "(float64 runs on the CPU reference executor)"
            )
        if not cuda and t.dtype not in CPU_DTYPES:
            raise _core.Error(f"layer {name}: input '{input_name}' is {t.dtype}; gnnjit takes float32 or float64 tensors")
