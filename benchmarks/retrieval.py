"""Retrieval benchmark: open, search and validated add on 1k/10k/100k-item memories, against rdflib in the same run.

Run: python benchmarks/retrieval.py [--sizes 1000,10000,100000] [--queries 200] [--quick] [--rebuild] [--json OUT]
     python benchmarks/retrieval.py --sizes 1000000 --no-baselines (owl-memory alone: rdflib cannot hold 1M items here)

Baselines (interleaved with owl-memory query by query, same ids in the same order checked on every query they run):
- rdflib, over the same triples in memory: the defining SELECT of a search without text (retrieval.defining_sparql);
  for a search with text, the SPARQL server backend's own text search (its statistics, coordination-level and
  exception queries and its BM25 ranking SELECT, over the text index a server holds: server/ranking.py), so the same
  work with the same ranking, its matches spelled in the form rdflib evaluates best (RdflibSearch);
- owlready2's native SPARQL engine over the memory's own quadstore, for shapes without text (in owlready2's dialect:
  it cannot compile EXISTS inside BIND, so the rule check is an OPTIONAL; same filters, same order).
Every timed call runs with the garbage collector paused, as timeit runs its statements.

Memories are generated deterministically (seeded), built once and cached under --cache-dir keyed by size; every
run measures a fresh copy of the cached memory, so the validated adds it makes never leak into the cache (a copy of a
cache built by an older owl-memory is brought to the current store format before any timing).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from owl_memory_bench.retrieval.baselines import BASELINES
from owl_memory_bench.retrieval.generator import SHAPES, VALIDATED_BUILD
from owl_memory_bench.retrieval.measure import run_size

QUIET_LOAD = 1.5  # above this 1-minute load average (before or after) no target is called met


def table(r: dict) -> str:
    """A plain-text table of one size's results: the like-with-like headline, then the unlike rows apart."""
    mem, b = r["memory"], r["build"]
    sample = b.get("sample_ms")  # a cache built before the sample was timed apart has none
    timing = f", Memory.validate(ids=[one]) p50 / p95 {sample['p50']:.1f} / {sample['p95']:.1f} ms" if sample else ""
    lines = [f"\n== {r['size']:,} items, {b['triples']:,} triples (built in {b['build_s']} s, validation sample "
             f"apart; bulk-loaded items conforming in a validated sample: {b['sample_conforming']}{timing}) ==",
             f"(1-minute load average before/after on {os.cpu_count()} cores: {r['load_average'][0]}/"
             f"{r['load_average'][1]}; other processes skew every timing, the ratios less so: engines interleave)",
             f"{'search p50 / p95 (ms)':<26}{'owl-memory':>18}{'rdflib (same SPARQL)':>28}{'owlready2 (native)':>28}"]
    for shape, s in mem["search"].items():
        if shape == "all":
            continue
        cells = [f"{s['p50']:.3f} / {s['p95']:.3f}"]
        for e in BASELINES:
            o = r[e]["search"].get(shape) if e in r else None
            cells.append(f"{o['p50']:.1f} / {o['p95']:.1f} ({o['p95'] / s['p95']:.0f}x)" if o else "no like baseline")
        lines.append(f"{shape:<26}{cells[0]:>18}{cells[1]:>28}{cells[2]:>28}")
    lines.append(f"{'all queries':<26}{mem['search']['all']['p50']:.3f} / {mem['search']['all']['p95']:.3f}")
    lines.append(f"validated add p50 / p95 (ms): {mem['add']['p50']:.2f} / {mem['add']['p95']:.2f}; open "
                 f"{mem['open_ms']} ms, first search {mem['first_search_ms']} ms, reopen+close {mem['reopen_ms']} ms")
    files = ", ".join(f"{name} {mb:,} MB" for name, mb in mem["file_mb"].items())
    lines.append(f"peak RSS of the benchmark process {mem['rss_mb']:,} MB (baselines' graphs included); files: {files}")
    if "rdflib" not in r:
        return "\n".join(lines + ["baselines not run (--no-baselines)"])
    for e in BASELINES:
        agree = ", ".join(f"{s}: {a['same']}/{a['compared']}" for s, a in r["agreement"][e].items() if a["compared"])
        lines.append(f"same ids, same order as {e}: {agree}")
    searched = ", ".join(f"{sh} {v['n']}" for sh, v in r["rdflib"]["search"].items() if sh != "all")
    lines.append(f"queries rdflib ran within its budget: {searched}; unlike row (not a speed comparison): rdflib "
                 f"parses the N-Triples and builds the text index in {r['rdflib']['load_ms'] / 1000:.1f} s")
    return "\n".join(lines)


def targets(r: dict) -> str:
    """The design targets checked against one size's results."""
    mem, checks = r["memory"], []
    for shape, s in mem["search"].items():
        if shape != "all":
            checks.append((f"{shape} p95 <= 2 ms", s["p95"] <= 2))
    if "rdflib" in r:
        ratios = {sh: v["p95"] / mem["search"][sh]["p95"] for sh, v in r["rdflib"]["search"].items() if sh != "all"}
        worst = min(ratios.values()) if ratios else 0
        checks.append((f"rdflib/owl-memory p95 >= 20x for every shape ({worst:.0f}x)", worst >= 20))
    checks += [("validated add p95 <= 10 ms", mem["add"]["p95"] <= 10), ("open <= 1 s", mem["open_ms"] <= 1000)]
    quiet = max(r["load_average"]) <= QUIET_LOAD
    marks = {True: "ok" if quiet else f"not called (load above {QUIET_LOAD})", False: "MISSED"}
    return "targets (set for 100k): " + ", ".join(f"{name}: {marks[ok]}" for name, ok in checks)


def main(argv=None) -> int:
    """Parse options, run every size, print the tables."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1000,10000,100000", help="comma-separated memory sizes (items)")
    p.add_argument("--quick", action="store_true", help="1k and 10k only (CI-sized)")
    p.add_argument("--queries", type=int, default=200, help="measured queries per size (4 shapes, round robin)")
    p.add_argument("--adds", type=int, default=200, help="validated Memory.add calls measured per size")
    p.add_argument("--baseline-seconds", type=float, default=20.0,
                   help="time budget per query shape for each baseline, rdflib and owlready2 (each stops early, "
                        "after at least 3 queries of a shape without text, 1 of a text shape)")
    p.add_argument("--cache-dir", type=Path, default=Path(tempfile.gettempdir()) / "owl-memory-bench")
    p.add_argument("--rebuild", action="store_true", help="rebuild cached memories")
    p.add_argument("--no-baselines", action="store_true",
                   help="measure owl-memory alone: no N-Triples export, rdflib or owlready2 (for 1M items)")
    p.add_argument("--json", type=Path, help="also write every number as JSON to this file")
    args = p.parse_args(argv)
    sizes = [1000, 10000] if args.quick else [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.queries < len(SHAPES) or any(s < VALIDATED_BUILD * 2 for s in sizes):
        p.error(f"use --queries >= {len(SHAPES)} and sizes >= {VALIDATED_BUILD * 2}")
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    results = []
    for size in sizes:
        results.append(run_size(args.cache_dir, size, queries=args.queries, adds=args.adds,
                                baseline_seconds=args.baseline_seconds, rebuild=args.rebuild,
                                baselines=not args.no_baselines))
        print(table(results[-1]), targets(results[-1]), sep="\n", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0 if all(a["same"] == a["compared"] for r in results for agreed in r["agreement"].values()
                    for a in agreed.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
