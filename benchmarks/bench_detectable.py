"""Achieved power of each minimum detectable difference over simulated releases.

For each design of a grid (scenarios x intraclass correlation, five trials per cell,
discordance 0.3, a condition at 0.85), ``analysis.inference.detectable_power.simulated_power``
draws releases whose true difference is the comparison's MDD at 80% power and runs its test:
the achieved power should lie within Monte Carlo error of 80%.

Run: ``.venv/bin/python benchmarks/bench_detectable.py [--draws 2000] [--scenarios 20 40 106
300] [--icc 0 0.3 0.6]``.
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from analysis.inference.detectable_power import simulated_power


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--scenarios", type=int, nargs="+", default=[20, 40, 106, 300])
    parser.add_argument("--icc", type=float, nargs="+", default=[0.0, 0.3, 0.6])
    args = parser.parse_args()
    start = time.perf_counter()
    tables = [
        simulated_power(
            n, 5, icc, discordance=0.3, rate=0.85, gate_rate=0.55, draws=args.draws, seed=n
        ).assign(icc=icc)
        for n in args.scenarios
        for icc in args.icc
    ]
    table = pd.concat(tables, ignore_index=True)
    table["comparison"] = table["comparison"].str.split(" \\(").str[0]
    table["achieved"] = [
        f"{100 * p:.1f}% ({100 * se:.1f})"
        for p, se in zip(table.power_achieved, table.mc_se, strict=True)
    ]
    wide = table.pivot_table(
        index=["comparison", "icc"], columns="n_scenarios", values="achieved", aggfunc="first"
    )
    print(f"Achieved power (MC SE, points) at the MDD for 80%, {args.draws} draws each")
    print(wide.to_markdown())
    print(f"{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
