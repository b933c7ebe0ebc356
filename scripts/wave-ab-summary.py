#!/usr/bin/env python3
"""Medians over rounds of what scripts/device-wave-ab.sh wrote: per build or
variant, the seed table's persistent p50 (inject applied, single step, mixed
300 with every op and with queries waited, the batch of steps) and the mixed
workload's persistent/traditional ratio (queries waited, the issue's row);
then heat3d 64^3 (add, step, query, mixed) per build.

  scripts/wave-ab-summary.py OUT_DIR
"""
import glob
import json
import os
import re
import statistics
import sys

ROWS = ["inject", "step", "mixed", "mixed_pipelined", "batch"]


def seed_rows(path):
    with open(path) as f:
        d = json.load(f)
    rows = {r["key"]: r for r in d["rows"]}
    got = {k: rows[k]["persistent"]["median_us"] for k in ROWS}
    mp = rows["mixed_pipelined"]
    got["ratio"] = mp["traditional"]["median_us"] / mp["persistent"]["median_us"]
    return got


def main(out):
    runs = {}
    for path in sorted(glob.glob(os.path.join(out, "seed-*-*.json"))):
        name = re.match(r"seed-(.+)-(\d+)\.json", os.path.basename(path)).group(1)
        try:
            runs.setdefault(name, []).append(seed_rows(path))
        except (ValueError, KeyError) as e:
            print(f"{path}: unreadable ({e})")
    print(f"{'run':8} {'n':>2} {'inject':>8} {'step':>8} {'mixed':>9} {'mixedQ':>9} {'ratioQ':>7} {'batch ms':>9}   rounds (inject/step/mixedQ)")
    for name in sorted(runs, key=lambda n: (n != "base", n != "new", n)):
        rs = runs[name]
        med = {k: statistics.median(r[k] for r in rs) for k in ROWS + ["ratio"]}
        each = " ".join(f"{r['inject']:.2f}/{r['step']:.2f}/{r['mixed_pipelined']:.0f}" for r in rs)
        print(f"{name:8} {len(rs):2} {med['inject']:8.2f} {med['step']:8.2f} {med['mixed']:9.0f} "
              f"{med['mixed_pipelined']:9.0f} {med['ratio']:7.2f} {med['batch'] / 1000:9.2f}   {each}")
    for path in sorted(glob.glob(os.path.join(out, "variant-*.txt"))):
        print(open(path).read().strip())
    heat = {}
    for path in sorted(glob.glob(os.path.join(out, "heat-*-*.txt"))):
        name = re.match(r"heat-(.+)-(\d+)\.txt", os.path.basename(path)).group(1)
        for line in open(path):
            if line.startswith(("persistent ", "traditional ")) and "faster by" not in line:
                heat.setdefault((name, line.split()[0]), []).append(line.strip())
    for key in sorted(heat):
        print(f"heat {key[0]}: " + " | ".join(heat[key]))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "wave-ab-out")
