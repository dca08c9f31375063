#!/usr/bin/env python3
"""Folds a `perf report --no-children --sort dso,sym --stdio` listing into groups of where
the CPU went (allocator, memcpy, BSON, fingerprint hashing, driver, tokio, kernel, …) and
prints them as a Markdown table with the top symbols of each group."""

import re
import sys
from collections import defaultdict

# First match wins: order matters (a bson symbol inside the driver is counted as BSON).
GROUPS = [
    ("allocator (malloc/free/realloc)", r"malloc|free|realloc|calloc|_int_|unlink_chunk|consolidate|tcache|mi_|alloc::alloc::|__rust_(alloc|dealloc|realloc)|RawVec.*grow|arena"),
    ("memcpy/memmove/memset", r"mem(cpy|move|set|cmp)|__memmove|__memcpy|__memset"),
    ("BSON documents (bson, serde, indexmap)", r"\bbson::|serde::|serde_bytes|<bson|indexmap"),
    ("fingerprint and digest hashing (sha2)", r"sha2|sha256|Sha256|compress256|digest::"),
    ("histograms (hdrhistogram)", r"hdrhistogram"),
    ("hash maps (hashbrown)", r"hashbrown|hash_one|BuildHasher"),
    ("string formatting (core::fmt)", r"core::fmt|alloc::fmt|fmt::write|pad_integral|Display"),
    ("MongoDB driver (mongodb)", r"\bmongodb::|<mongodb"),
    ("tokio runtime and mio", r"\btokio::|<tokio|\bmio::|parking_lot"),
    ("mongobench workload and runner", r"\bmongobench::|<mongobench"),
    ("locks and atomics (futex, pthread)", r"futex|pthread|__lll_"),
    ("kernel (syscalls, TCP, scheduling)", r"^\[kernel|\[k\]"),
]


def main(path):
    rows = []
    for line in open(path, errors="replace"):
        m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(.*)$", line)
        if not m:
            continue
        pct, dso, kind, sym = float(m.group(1)), m.group(2), m.group(3), m.group(4).strip()
        rows.append((pct, dso, kind, sym))
    groups = defaultdict(float)
    tops = defaultdict(list)
    for pct, dso, kind, sym in rows:
        label = "other"
        text = f"[k] {sym}" if kind == "k" else sym
        for name, pattern in GROUPS:
            if re.search(pattern, text):
                label = name
                break
        groups[label] += pct
        tops[label].append((pct, sym))
    total = sum(groups.values())
    print("| group | share of client CPU samples | top symbols (share) |")
    print("|---|---:|---|")
    for label, pct in sorted(groups.items(), key=lambda kv: -kv[1]):
        top = sorted(tops[label], reverse=True)[:3]
        names = "; ".join(f"`{short(s)}` {p:.1f}%" for p, s in top)
        print(f"| {label} | {pct:.1f}% | {names} |")
    print(f"\n({total:.1f}% of samples attributed to a symbol)")


def short(sym):
    sym = re.sub(r"<[^<>]*>", "<…>", sym)
    sym = re.sub(r"::h[0-9a-f]{16}$", "", sym)
    return sym[:90].replace("|", "\\|")


if __name__ == "__main__":
    main(sys.argv[1])
