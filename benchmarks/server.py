"""Server backend benchmark: an Oxigraph server against the embedded memory, same items, same queries, one run.

Run: python benchmarks/server.py [--sizes 10000,100000] [--queries 200] [--adds 100] [--agents 8] [--json OUT]

For each size: the same generated items (the retrieval benchmark's generator) are bulk-loaded into an embedded
memory and into a fresh Oxigraph server (`oxigraph serve` on 127.0.0.1); the query set is run interleaved on both
(embedded, then server, per query) and their ids compared; validated adds are timed on both; then N agent
processes each run rounds of add + search + record_use at the same time on each backend, every id they were handed
back is checked to be stored (lost writes), and a shared item's use counter is checked to equal the uses recorded
(lost uses); the server's rounds per second are compared with the embedded memory's. Each server search's HTTP
requests are counted at its client.
Exit code 1 when a write was lost, an agent failed or a search answered differently on the two backends.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from owl_memory_bench.retrieval.generator import SHAPES
from owl_memory_bench.server_compare import run_size


def ratio(a: float, b: float) -> str:
    """b / a as 'N.Nx'."""
    return f"{b / a:.1f}x" if a else "n/a"


def report(r: dict) -> str:
    """A table of one size: p50 / p95 in ms, server / embedded ratios."""
    per_s = {k: round(r["size"] / v) if v else 0 for k, v in r["load_s"].items()}
    lines = [f"\n== {r['size']} items: load embedded {r['load_s']['embedded']} s ({per_s['embedded']} items/s), "
             f"server {r['load_s']['server']} s ({per_s['server']} items/s); "
             f"same results {r['search']['same_results']}; 1-min load average {r['load_avg_before']} before, "
             f"{r['load_avg_after']} after",
             f"{'operation':<22}{'embedded p50/p95':>20}{'server p50/p95':>20}{'ratio p50/p95':>18}"
             f"{'requests mean/max':>20}"]
    rows = [(f"search {s}", r["search"]["embedded"][s], r["search"]["server"][s])
            for s in (*SHAPES, "all") if s in r["search"]["embedded"]]
    rows.append(("add (validated)", r["add"]["embedded"], r["add"]["server"]))
    for name, e, s in rows:
        n = r["search"]["requests"].get(name.removeprefix("search "))
        lines.append(f"{name:<22}{e['p50']:>9.2f} /{e['p95']:>8.2f}{s['p50']:>11.2f} /{s['p95']:>8.2f}"
                     f"{ratio(e['p50'], s['p50']):>10} /{ratio(e['p95'], s['p95']):>6}"
                     + (f"{n['mean']:>14.2f} /{n['max']:>4}" if n else ""))
    for name, a in r["agents"].items():
        lines.append(f"{a['agents']} agents on {name}: {a['completed_rounds']} rounds (add + search + record_use) "
                     f"in {a['wall_s']} s = {a['rounds_per_s']}/s; lost adds {a['lost_adds']}, "
                     f"lost uses {a['lost_uses']}" + (f"; errors: {a['errors']}" if a["errors"] else ""))
    speed = {name: a["rounds_per_s"] for name, a in r["agents"].items()}
    lines.append(f"agents: the server's rounds/s are {ratio(speed['embedded'], speed['server'])} the embedded memory's")
    return "\n".join(lines)


def main(argv=None) -> int:
    """Run the benchmark and print the tables (and JSON with --json)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000", help="comma-separated memory sizes (e.g. 10000,100000)")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--adds", type=int, default=100)
    ap.add_argument("--agents", type=int, default=8, help="agent processes writing and searching at once")
    ap.add_argument("--ops", type=int, default=50, help="add + search + record_use rounds per agent")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory(prefix="owl-memory-server-bench-") as work:
        for size in (int(s) for s in args.sizes.split(",")):
            results.append(run_size(size, Path(work), query_count=args.queries, add_count=args.adds,
                                    agent_count=args.agents, ops=args.ops))
            print(report(results[-1]), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 1 if any(failures(r) for r in results) else 0


def failures(r: dict) -> list[str]:
    """What must not happen: lost adds or uses, agent errors, a search answered differently (printed)."""
    bad = [f"{name}: {a['lost_adds']} lost adds, {a['lost_uses']} lost uses, errors {a['errors']}"
           for name, a in r["agents"].items() if a["lost_adds"] or a["lost_uses"] or a["errors"]]
    same, total = r["search"]["same_results"].split("/")
    if same != total:
        bad.append(f"{int(total) - int(same)} of {total} searches answered differently")
    for line in bad:
        print(f"FAIL at {r['size']} items: {line}")
    return bad


if __name__ == "__main__":
    sys.exit(main())
