"""The layers gnnjit.ops knows, by spec: a library layer's options as canonical JSON, or a layer written with
gnnjit.dsl by its structural hash; what each spec's layer takes and gives, worked out once; and the seed a call
of a layer with attention dropout draws from."""

from __future__ import annotations

import json
import weakref
from functools import lru_cache
from typing import Optional

import torch
from torch import Tensor

from gnnjit import _core


def layer_spec(name: str, **options) -> str:
    """The canonical spec of a library layer (the ops' `layer` argument)."""
    return json.dumps({"name": name, **{k: v for k, v in options.items() if v is not None}}, sort_keys=True)


_custom_layers: dict = {}  # structural hash -> a layer written with gnnjit.dsl (kept for the process's life)
_custom_specs = weakref.WeakKeyDictionary()  # layer object -> its spec (its hash is computed once)


def custom_spec(layer: _core.Layer) -> str:
    """The spec the ops know a layer written with gnnjit.dsl by: its structural hash, and its first output's dim
    and heads (which key its tuning records)."""
    spec = _custom_specs.get(layer)
    if spec is None:
        out = layer.outputs[0]
        spec = json.dumps({"custom": layer.hash, "name": layer.name, "dim": out["dim"], "heads": out["heads"]},
                          sort_keys=True)
        _custom_layers[layer.hash] = layer
        _custom_specs[layer] = spec
    return spec


@lru_cache(maxsize=256)
def layer_of(spec: str) -> _core.Layer:
    """The gnnjit.Layer a spec names, built once (or the custom layer registered under it)."""
    options = json.loads(spec)
    if "custom" in options:
        layer = _custom_layers.get(options["custom"])
        if layer is None:
            raise _core.Error(f"no layer written with gnnjit.dsl has the hash {options['custom']} in this process")
        return layer
    return _core.Layer.from_library(options.pop("name"), **options)


@lru_cache(maxsize=256)
def io(spec: str) -> tuple:
    """(layer name, input names, (output name, size) pairs) of a spec, read once (a Layer's inputs and outputs
    are built anew on each access)."""
    l = layer_of(spec)
    return l.name, tuple(i["name"] for i in l.inputs), tuple((o["name"], o["size"]) for o in l.outputs)


@lru_cache(maxsize=256)
def saved_layout(spec: str) -> tuple:
    """(name, width, positions, aliased output or '') of each value the forward saves for the backward on CUDA."""
    return tuple(_core.saved_layout(layer_of(spec)))


@torch.compiler.assume_constant_result
def resolved(items: tuple) -> tuple:
    """described() of a library layer's options: run, not traced, by torch.compile, whose graphs take the result
    as a constant."""
    return _resolve(items)


@lru_cache(maxsize=256)
def _resolve(items: tuple) -> tuple:
    return described(layer_spec(**dict(items)))


@lru_cache(maxsize=256)
def described(spec: str) -> tuple:
    """(spec, layer name, input names, which are parameters, output names, whether calls draw attention
    dropout)."""
    l = layer_of(spec)
    return (
        spec,
        l.name,
        tuple(s["name"] for s in l.inputs),
        tuple(s["kind"] == "param" for s in l.inputs),
        tuple(o["name"] for o in l.outputs),
        l.drops_attention,
    )


def dropout_seed() -> Tensor:
    """A fresh seed for one call of a layer with attention dropout, from torch's default CPU generator (so
    torch.manual_seed makes training reproducible)."""
    return torch.randint(-(2**63), 2**63 - 1, (1,), dtype=torch.int64)


def seed_value(seed: Optional[Tensor]) -> int:
    """What attention dropout draws from: the call's seed tensor (one int64), or 0 for layers without dropout."""
    return int(seed.reshape(-1)[0]) & 0xFFFFFFFFFFFFFFFF if seed is not None else 0
