"""Server backend benchmark: an Oxigraph server against the embedded memory, same items, same queries, one run.

Run: python benchmarks/server.py [--sizes 10000,100000] [--queries 200] [--adds 100] [--agents 4] [--json OUT]

For each size: the same generated items (benchmarks/retrieval.py's generator) are bulk-loaded into an embedded
memory and into a fresh Oxigraph server (`oxigraph serve` on 127.0.0.1); the query set is run interleaved on both
(embedded, then server, per query) and their ids compared; validated adds are timed on both; then N agent
processes each add items and search at the same time on each backend, and every id they were handed back is
checked to be stored (lost writes), and a shared item's use counter is checked to equal the uses recorded.
Exit code 1 when a write was lost, an agent failed or a search answered differently on the two backends.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks"), str(ROOT / "tests")]

from retrieval import SHAPES, by_shape, item_specs, query_set, summary_ms, timed  # noqa: E402
from servers import Oxigraph  # noqa: E402

from owl_memory import Memory  # noqa: E402


def load(location, specs) -> float:
    """Bulk-load specs (trusted, unvalidated) into the memory at `location`; seconds."""
    with Memory(location) as m:
        return timed(m.add_many, specs, batch=500, validate=False)[1] / 1000


def searches(local: Memory, server: Memory, queries: list) -> dict:
    """Interleaved search latencies on both backends and how many results agree exactly."""
    for _, kw in queries[:10]:
        local.search(**kw)
        server.search(**kw)
    a, b, same = [], [], 0
    for shape, kw in queries:
        x, ms = timed(local.search, **kw)
        a.append((shape, ms))
        y, ms = timed(server.search, **kw)
        b.append((shape, ms))
        same += [h.id for h in x] == [h.id for h in y]
    return {"embedded": by_shape(a), "server": by_shape(b), "same_results": f"{same}/{len(queries)}"}


def adds(m: Memory, specs) -> dict:
    """Validated add latencies (after 5 warm-up adds)."""
    for s in specs[:5]:
        m.add(s)
    return summary_ms([timed(m.add, s)[1] for s in specs[5:]])


def agent(location: str, n: int, ops: int, shared: str, queue) -> None:
    """One agent process: `ops` rounds of add + search + record_use on the shared item; reports ids and time."""
    specs = item_specs(ops, start=10_000_000 + n * ops, salt=f"agent-{n}")
    queries = query_set(ops, salt=f"agent-{n}")
    ids, errors = [], []
    t = time.perf_counter()
    try:
        with Memory(location) as m:
            for spec, (_, kw) in zip(specs, queries, strict=True):
                ids.append(m.add(spec))
                m.search(**kw)
                m.record_use(shared, True)
    except Exception as e:  # reported, so a backend that cannot take concurrent writers shows as such
        errors.append(f"{type(e).__name__}: {str(e)[:160]}")
    queue.put({"ids": ids, "seconds": time.perf_counter() - t, "errors": errors})


def agents(location: str, count: int, ops: int) -> dict:
    """`count` agent processes at once: throughput (operations per second) and lost writes."""
    with Memory(location) as m:
        shared = m.search(k=1)[0].id
        before = m.get(shared)["use_count"]
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=agent, args=(location, n, ops, shared, queue)) for n in range(count)]
    t = time.perf_counter()
    for p in procs:
        p.start()
    reports = [queue.get() for _ in procs]
    for p in procs:
        p.join()
    wall = time.perf_counter() - t
    ids = [i for r in reports for i in r["ids"]]
    with Memory(location) as m:
        stored = len(m.backend.stored(ids))
        uses = m.get(shared)["use_count"] - before
    done = len(ids)
    return {"agents": count, "ops_per_agent": ops, "completed_rounds": done, "wall_s": round(wall, 2),
            "rounds_per_s": round(done / wall, 1), "lost_adds": done - stored,
            "lost_uses": done - uses, "errors": [e for r in reports for e in r["errors"]][:4]}


def run_size(size: int, args, work: Path) -> dict:
    """Every measurement for one memory size."""
    specs = item_specs(size)
    server = Oxigraph(work / f"oxigraph-{size}")
    try:
        local_dir = work / f"embedded-{size}"
        out = {"size": size, "load_avg_before": round(os.getloadavg()[0], 2),
               "load_s": {"embedded": round(load(local_dir, specs), 1),
                                        "server": round(load(server.url, specs), 1)}}
        queries = query_set(args.queries, salt=f"server-{size}")
        new = item_specs(args.adds + 5, start=size, salt="server-adds")
        with Memory(local_dir) as local, Memory(server.url) as remote:
            out["search"] = searches(local, remote, queries)
            out["add"] = {"embedded": adds(local, new), "server": adds(remote, new)}
        out["agents"] = {"server": agents(server.url, args.agents, args.ops),
                         "embedded": agents(str(local_dir), args.agents, args.ops)}
        out["load_avg_after"] = round(os.getloadavg()[0], 2)
        return out
    finally:
        server.stop()


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
             f"{'operation':<22}{'embedded p50/p95':>20}{'server p50/p95':>20}{'ratio p50/p95':>18}"]
    rows = [(f"search {s}", r["search"]["embedded"][s], r["search"]["server"][s])
            for s in (*SHAPES, "all") if s in r["search"]["embedded"]]
    rows.append(("add (validated)", r["add"]["embedded"], r["add"]["server"]))
    for name, e, s in rows:
        lines.append(f"{name:<22}{e['p50']:>9.2f} /{e['p95']:>8.2f}{s['p50']:>11.2f} /{s['p95']:>8.2f}"
                     f"{ratio(e['p50'], s['p50']):>10} /{ratio(e['p95'], s['p95']):>6}")
    for name, a in r["agents"].items():
        lines.append(f"{a['agents']} agents on {name}: {a['completed_rounds']} rounds (add + search + record_use) "
                     f"in {a['wall_s']} s = {a['rounds_per_s']}/s; lost adds {a['lost_adds']}, "
                     f"lost uses {a['lost_uses']}" + (f"; errors: {a['errors']}" if a["errors"] else ""))
    return "\n".join(lines)


def main(argv=None) -> int:
    """Run the benchmark and print the tables (and JSON with --json)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000", help="comma-separated memory sizes (e.g. 10000,100000)")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--adds", type=int, default=100)
    ap.add_argument("--agents", type=int, default=4)
    ap.add_argument("--ops", type=int, default=50, help="add + search + record_use rounds per agent")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory(prefix="owl-memory-server-bench-") as work:
        for size in (int(s) for s in args.sizes.split(",")):
            results.append(run_size(size, args, Path(work)))
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
