#!/usr/bin/env python3
"""The autotuner's table from bench_autotune --json lines: one row per graph, layer and width with each pass's
rule, tuned and exhaustive times and the tuning's seconds, then the autotuner issue's goals over every pass.
Several files (runs split over graphs) are merged; a case measured twice keeps its last line.

    python3 scripts/autotune_table.py run1.jsonl run2.jsonl > table.md
"""

import argparse
import json
import sys


def load(paths):
    cases = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    cases[(r["graph"], r["layer"], r["width"], r["pass"])] = r
    return cases


def ms(v):
    return "inf" if v is None else f"{v:.3f}" if v < 10 else f"{v:.2f}" if v < 100 else f"{v:.1f}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("jsonl", nargs="+", help="bench_autotune --json files")
    parser.add_argument("--within", type=float, default=1.05, help="tuned / exhaustive goal (default 1.05)")
    parser.add_argument("--seconds", type=float, default=3.0, help="tuning time goal (default 3 s)")
    args = parser.parse_args(argv)
    cases = load(args.jsonl)
    graphs = list(dict.fromkeys(g for g, *_ in cases))
    print("| graph | layer | F | fwd rule / tuned / exh. ms | fwd tuned/exh. | bwd rule / tuned / exh. ms "
          "| bwd tuned/exh. | tune s |")
    print("|---|---|---|---|---|---|---|---|")
    passes = within = not_slower = fast = 0
    for graph in graphs:
        layers = sorted({(l, w) for g, l, w, _ in cases if g == graph}, key=lambda lw: (lw[0], lw[1]))
        for layer, width in layers:
            cells, seconds = [], 0.0
            for name in ("fwd", "bwd"):
                r = cases.get((graph, layer, width, name))
                if r is None:
                    cells += ["-", "-"]
                    continue
                exhaustive = r["exhaustive_ms"]
                best = min(exhaustive, r["tuned_ms"]) if exhaustive is not None else None
                ratio = r["tuned_ms"] / best if best else None
                passes += 1
                within += ratio is not None and ratio <= args.within
                not_slower += r["tuned_ms"] <= r["rule_ms"]
                fast += r["tuning_seconds"] <= args.seconds
                seconds = r["tuning_seconds"]
                mark = "-" if ratio is None else f"**{ratio:.3f}**" if ratio > args.within else f"{ratio:.3f}"
                cells += [f"{ms(r['rule_ms'])} / {ms(r['tuned_ms'])} / {ms(best)}", mark]
            print(f"| {graph} | {layer} | {width} | " + " | ".join(cells) + f" | {seconds:.2f} |")
    print(f"\n{passes} passes: tuned within {100 * (args.within - 1):.0f} % of the exhaustive best {within}; "
          f"not slower than the rule {not_slower}; tuned in <= {args.seconds:g} s {fast}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
