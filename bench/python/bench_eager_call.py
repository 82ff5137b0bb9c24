#!/usr/bin/env python3
"""Host us per call of the pieces of gnnjit's eager CUDA call, through its torch operator library's C++ autograd
function and through its Python path, in one process (where a whole training step is too noisy to split).

    python bench/python/bench_eager_call.py                  # cora, GCN and SAGE max, F = 128
    python bench/python/bench_eager_call.py --graph pubmed --width 64

Each figure is the median (and the minimum) over --blocks blocks of --calls calls, after 50 warm-up calls; the
device is synchronised between blocks, not inside them. 'forward_call' is the eager entry of gnnjit.ops without
an nn module (graph lookup, runner lookup, the call); the backward is torch.autograd.grad from a kept output with
a dense gradient, with the autograd engine's threads on and off. For a layer of one input, a training step of 1
and of 4 of it in a row: their difference over 3 is what one more layer adds to a step's host time, without the
autograd engine's once-a-step cost that a single layer's backward carries alone. Needs a CUDA device and the
package's torch operator library (the rows of the op alone are left out without it).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch

from gnnjit import _eager, _layer_cache, _layers, _torch_ops
from bench_torch import load_graph

# (layer, options of its spec besides dim, self loops), as gnnjit.nn calls them.
LAYERS = {"gcn": (dict(weighted=False), "replace"), "sage": (dict(aggr="max"), "keep")}


def host_times(call, calls: int, blocks: int) -> tuple:
    """(median, minimum) host us per call over `blocks` blocks of `calls` calls, after 50 warm-up calls."""
    for _ in range(50):
        call()
    torch.cuda.synchronize()
    times = []
    for _ in range(blocks):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        times.append((time.perf_counter() - start) / calls * 1e6)
        torch.cuda.synchronize()
    return statistics.median(times), min(times)


def shown(times: tuple) -> str:
    return f"{times[0]:7.1f} (min {times[1]:6.1f})"


def bench_layer(name: str, num_nodes: int, edge_index, args, device) -> None:
    options, loops = LAYERS[name]
    spec = _layers.layer_spec(name, dim=args.width, **options)
    layer = _layers.layer_of(spec)
    torch.manual_seed(0)
    xs = [torch.randn(1 if s["kind"] == "param" else num_nodes, s["size"], device=device) for s in layer.inputs]
    run = _layer_cache.runner_on(spec, layer, edge_index, None, num_nodes, loops, device)
    measure = lambda call: host_times(call, args.calls, args.blocks)  # noqa: E731
    t = lambda call: shown(measure(call))  # noqa: E731
    print(f"== {args.graph} {name}, F={args.width}: host us per call, median (min)")
    print("torch.empty(n, F)             ", t(lambda: torch.empty((num_nodes, args.width), device=device)))
    print("runner lookup                 ", t(lambda: _layer_cache.runner_on(spec, layer, edge_index, None, num_nodes,
                                                                             loops, device)))
    initial = _torch_ops.enabled
    paths = [True, False] if _torch_ops.loaded else [False]
    with torch.no_grad():
        if _torch_ops.loaded:
            runner = _torch_ops.runner_of(run, True)
            print("no_grad: the op alone         ", t(lambda: _torch_ops.layer_op(runner, xs, 0, False)))
        print("no_grad: Python _run_forward  ", t(lambda: _layer_cache._run_forward(run, xs, None, False)))
        for path in paths:
            _torch_ops.enabled = path
            print(f"no_grad: forward_call, {'C++ op' if path else 'Python'}",
                  t(lambda: _eager.forward_call(spec, edge_index, None, num_nodes, loops, xs, None)))
    leaves = [x.clone().requires_grad_(True) for x in xs]
    for path in paths:
        _torch_ops.enabled = path
        label = "C++ op" if path else "Python"
        print(f"autograd: forward_call, {label}",
              t(lambda: _eager.forward_call(spec, edge_index, None, num_nodes, loops, leaves, None)))
        out = _eager.forward_call(spec, edge_index, None, num_nodes, loops, leaves, None)[0]
        grad = torch.ones_like(out)
        print(f"autograd: backward, {label}    ",
              t(lambda: torch.autograd.grad(out, leaves, grad, retain_graph=True)))
        torch.autograd.set_multithreading_enabled(False)
        try:
            print(f"autograd: backward, {label}, engine thread off",
                  t(lambda: torch.autograd.grad(out, leaves, grad, retain_graph=True)))
        finally:
            torch.autograd.set_multithreading_enabled(True)
    _torch_ops.enabled = initial
    if len(xs) == 1:  # the layer's output can be its next input: a stack of layers
        bench_stack(spec, edge_index, num_nodes, loops, leaves[0], measure)
    a = torch.randn(num_nodes, args.width, device=device, requires_grad=True)
    print("for scale: torch's a * 2      ", t(lambda: a * 2))
    doubled = a * 2
    ones = torch.ones_like(doubled)
    print("for scale: torch's a * 2, backward", t(lambda: torch.autograd.grad(doubled, a, ones, retain_graph=True)))


STACK = (1, 4)


def bench_stack(spec, edge_index, num_nodes: int, loops: str, leaf, measure) -> None:
    """A training step (forward, then torch.autograd.grad with a dense gradient) of STACK[0] and of STACK[1] of
    the layer in a row, engine thread on and off; their difference over the extra layers is what one more layer
    costs a step, without the autograd engine's once-a-step overhead."""
    def step_of(depth: int):
        def step():
            h = leaf
            for _ in range(depth):
                h = _eager.forward_call(spec, edge_index, None, num_nodes, loops, [h], None)[0]
            torch.autograd.grad(h, leaf, torch.ones_like(h))
        return step

    for threads in (True, False):
        torch.autograd.set_multithreading_enabled(threads)
        try:
            medians = {}
            for depth in STACK:
                times = measure(step_of(depth))
                medians[depth] = times[0]
                print(f"step of {depth} layer(s), engine thread {'on ' if threads else 'off'}", shown(times))
            extra = (medians[STACK[1]] - medians[STACK[0]]) / (STACK[1] - STACK[0])
            print(f"per layer (the {STACK[1]}-layer step less the {STACK[0]}-layer one, over {STACK[1] - STACK[0]}): "
                  f"{extra:.1f}")
        finally:
            torch.autograd.set_multithreading_enabled(True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", default="cora", help="a dataset or generator spec (default cora)")
    parser.add_argument("--layers", nargs="+", choices=sorted(LAYERS), default=sorted(LAYERS))
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--calls", type=int, default=200, help="calls per timed block")
    parser.add_argument("--blocks", type=int, default=15, help="timed blocks (median and minimum reported)")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench_eager_call: needs a CUDA device (it times gnnjit's CUDA call)", file=sys.stderr)
        return 2
    device = torch.device("cuda")
    num_nodes, edge_index = load_graph(args.graph, device)
    for name in args.layers:
        bench_layer(name, num_nodes, edge_index, args, device)
    return 0


if __name__ == "__main__":
    sys.exit(main())
