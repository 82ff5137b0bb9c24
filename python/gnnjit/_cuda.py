"""What gnnjit's CUDA paths share: device memory from torch's caching allocator, and torch's current stream and
device as the cheapest calls give them."""

from __future__ import annotations

import torch

from gnnjit import _core

_allocator_installed = False


def install_allocator() -> None:
    """gnnjit's device memory from torch's caching allocator (counted by torch.cuda.memory_allocated)."""
    global _allocator_installed
    if not _allocator_installed:
        # torch's builtins where they exist (what caching_allocator_alloc calls after some 25 us of Python):
        # raw_alloc(bytes, stream) on the current device, with the device's current stream.
        raw_alloc = getattr(torch._C, "_cuda_cudaCachingAllocator_raw_alloc", None)
        raw_delete = getattr(torch._C, "_cuda_cudaCachingAllocator_raw_delete", None)
        if None not in (raw_alloc, raw_delete, _raw_stream):
            _core.set_device_allocator(raw_alloc, raw_delete, _raw_stream, _native_allocator())
        else:
            _core.set_device_allocator(torch.cuda.caching_allocator_alloc, torch.cuda.caching_allocator_delete)
        _allocator_installed = True


def _native_allocator() -> int:
    """The torch operator library's table of the same allocator without Python (0: the library is not loaded,
    or GNNJIT_TORCH_OPS=0 turned it off)."""
    from gnnjit import _torch_ops  # here, not at the top: it imports gnnjit._layer_cache, which imports this

    return _torch_ops.allocator_bridge() if _torch_ops.enabled else 0


_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
# The current device without torch.cuda.current_device's lazy-init check: a call on CUDA tensors has CUDA set up.
current_device = getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device


def device_index(device: torch.device) -> int:
    return device.index if device.index is not None else current_device()


def stream(device: torch.device) -> int:
    """torch's current stream on `device`, as a pointer (torch's private getter costs far less than the public
    torch.cuda.current_stream)."""
    if _raw_stream is not None:
        return _raw_stream(device_index(device))
    return torch.cuda.current_stream(device).cuda_stream


def is_current(device: torch.device) -> bool:
    """Whether `device` is the current one (the allocator and the stream are the current device's)."""
    return device.index is None or device.index == current_device()
