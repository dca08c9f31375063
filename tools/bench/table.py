#!/usr/bin/env python3
"""Folds tools/bench/run's cells.tsv into the Markdown table of BENCHMARKS.md: per client, workload
and worker count, min/median/max over repetitions of ops per client CPU-second, client CPU µs
per operation and ops/s on one core, the peak RSS, and the median ops per CPU-second against
the limit client's and mongobench's."""

import csv
import statistics
import sys
from collections import defaultdict

ORDER = {"mongobench": 0, "baseline": 1, "plgm": 2, "ycsb": 3, "driver": 4, "limit": 5}
WORKLOADS = {"a": "YCSB A", "c": "YCSB C", "e": "YCSB E", "flights": "flights", "seed": "seeding (documents)"}


def spread(values, fmt):
    if not values:
        return "–"
    lo, mid, hi = min(values), statistics.median(values), max(values)
    if len(values) == 1:
        return fmt.format(mid)
    return f"{fmt.format(mid)} ({fmt.format(lo)}–{fmt.format(hi)})"


def main(path):
    cells = defaultdict(list)
    with open(path, newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            try:
                ops = float(row["ops"])
                secs = float(row["seconds"])
                cpu = float(row["cpu_seconds"])
                rss = float(row["max_rss_kb"] or 0)
            except (TypeError, ValueError):
                continue
            if ops <= 0 or cpu <= 0 or secs <= 0:
                continue
            key = (row["workload"], int(row["workers"]), row["client"])
            cells[key].append((ops / cpu, cpu * 1e6 / ops, ops / secs, rss / 1024))

    def median_eff(workload, workers, client):
        runs = cells.get((workload, workers, client))
        return statistics.median(r[0] for r in runs) if runs else None

    print(
        "| workload | workers | client | reps | ops per client CPU-s, median (min–max) "
        "| client CPU µs/op, median (min–max) | ops/s on one core, median (min–max) "
        "| peak RSS MB | vs limit client | vs mongobench |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    keys = sorted(cells, key=lambda k: (list(WORKLOADS).index(k[0]) if k[0] in WORKLOADS else 9, k[1], ORDER.get(k[2], 9)))
    for workload, workers, client in keys:
        runs = cells[(workload, workers, client)]
        eff = statistics.median(r[0] for r in runs)
        limit = median_eff(workload, workers, "limit")
        mb = median_eff(workload, workers, "mongobench")
        vs_limit = f"{eff / limit:.2f}×" if limit else "–"
        vs_mb = f"{eff / mb:.2f}×" if mb and client != "mongobench" else "–"
        print(
            f"| {WORKLOADS.get(workload, workload)} | {workers} | {client} | {len(runs)} "
            f"| {spread([r[0] for r in runs], '{:,.0f}')} "
            f"| {spread([r[1] for r in runs], '{:.1f}')} "
            f"| {spread([r[2] for r in runs], '{:,.0f}')} "
            f"| {max(r[3] for r in runs):.0f} | {vs_limit} | {vs_mb} |"
        )


if __name__ == "__main__":
    main(sys.argv[1])
