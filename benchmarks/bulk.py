"""Bulk-load benchmark: items/s of Memory.add_many into a new embedded memory (unvalidated and validated) and into
Oxigraph on loopback, against a plain SQLite executemany of the same items' rows in the same run.

Run: python benchmarks/bulk.py [--items 10000] [--validated-items 2000] [--server-items 5000] [--batch 1000]
     [--json OUT]

The baseline writes the rows every item adds (store.items.item_rows: subject, predicate, object, datatype) into one
SQLite table without indexes, in one transaction: the least a store of those triples can cost here. owl-memory writes
the same triples into the quadstore's indexed tables plus its retrieval index (FTS5, order and postings rows) and the
payloads. Items are the retrieval benchmark's generated ones (seeded). Targets (>= 10k items/s embedded, >= 5k items/s
to Oxigraph) are called met only at a load average <= 1.5.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from owl_memory import Memory
from owl_memory.store.items import item_rows
from owl_memory_bench.retrieval.generator import item_specs
from owl_memory_bench.servers import Oxigraph
from owl_memory_bench.timing import summary_ms, timed

QUIET_LOAD = 1.5  # above this 1-minute load average no target is called met


def sqlite_baseline(specs: list, folder: Path) -> float:
    """Seconds to build the items' rows and executemany them into a plain table (one transaction)."""
    db = sqlite3.connect(folder / "baseline.sqlite3")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE t (s TEXT, p TEXT, o, d TEXT)")
    t = time.perf_counter()
    with db:
        db.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", (row for s in specs for row in item_rows(s)))
    seconds = time.perf_counter() - t
    db.close()
    return seconds


def load(location: str | Path, specs: list, batch: int, validate: bool) -> float:
    """Seconds of one add_many of `specs` into the memory at `location` (opened before the clock starts)."""
    with Memory(location) as m:
        t = time.perf_counter()
        ids = m.add_many(specs, batch=batch, validate=validate)
        seconds = time.perf_counter() - t
        if len(m) != len(set(ids)):
            raise SystemExit(f"stored {len(m)} items for {len(set(ids))} ids: the load lost items")
    return seconds


def validation(location: Path, specs: list) -> dict[str, dict]:
    """Memory.validate(ids=[one]) p50 / p95 over 20 loaded items (after one warm-up call), and with the file check
    that reads every page of both files (files=True) over 3."""
    with Memory(location) as m:
        m.validate(ids=[specs[0].id])
        step = max(1, len(specs) // 20)
        items = [timed(m.validate, ids=[s.id])[1] for s in specs[::step][:20]]
        files = [timed(m.validate, ids=[s.id], files=True)[1] for s in specs[1::step][:3]]
    return {"ids": summary_ms(items), "ids and files": summary_ms(files)}


def main(argv=None) -> int:
    """Run every load, print items/s with the baseline's and the ratios."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--items", type=int, default=10000, help="items of the unvalidated embedded load and baseline")
    p.add_argument("--validated-items", type=int, default=2000, help="items of the validated embedded load")
    p.add_argument("--server-items", type=int, default=5000, help="items loaded into Oxigraph (0: skip the server)")
    p.add_argument("--batch", type=int, default=1000, help="items per add_many batch (one transaction each)")
    p.add_argument("--json", type=Path, help="also write every number as JSON to this file")
    args = p.parse_args(argv)
    specs = item_specs(max(args.items, args.validated_items, args.server_items))
    before = os.getloadavg()[0]
    runs: dict[str, tuple[int, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        runs["sqlite executemany (baseline)"] = args.items, sqlite_baseline(specs[: args.items], root)
        runs["embedded, validate=False"] = args.items, load(root / "plain", specs[: args.items], args.batch, False)
        checks = validation(root / "plain", specs[: args.items])
        runs["embedded, validated"] = args.validated_items, load(root / "checked", specs[: args.validated_items],
                                                                 args.batch, True)
        if args.server_items:
            server = Oxigraph(root / "oxigraph")
            try:
                runs["Oxigraph, validate=False"] = args.server_items, load(server.url, specs[: args.server_items],
                                                                           args.batch, False)
            finally:
                server.stop()
    after = os.getloadavg()[0]
    rate = {name: n / s for name, (n, s) in runs.items()}
    base = rate["sqlite executemany (baseline)"]
    print(f"bulk load, batch {args.batch} (1-minute load average before/after on {os.cpu_count()} cores: "
          f"{before:.2f}/{after:.2f})")
    for name, (n, s) in runs.items():
        print(f"{name:<32}{n:>8} items {s:>8.2f} s {rate[name]:>10,.0f} items/s  ({rate[name] / base:.3f}x baseline)")
    for name, c in checks.items():
        print(f"Memory.validate({name}) of one item of {args.items}: p50 / p95 {c['p50']:.1f} / {c['p95']:.1f} ms")
    quiet = max(before, after) <= QUIET_LOAD
    checks = [("embedded >= 10k items/s", rate["embedded, validate=False"] >= 10000)]
    if "Oxigraph, validate=False" in rate:
        checks.append(("Oxigraph >= 5k items/s", rate["Oxigraph, validate=False"] >= 5000))
    marks = {True: "ok", False: "MISSED"}
    print("targets: " + ", ".join(f"{c}: {marks[ok] if quiet or not ok else 'not called (load above 1.5)'}"
                                  for c, ok in checks))
    if args.json:
        args.json.write_text(json.dumps({"load_average": [before, after], "batch": args.batch, "validate": checks,
                                         "runs": {k: {"items": n, "seconds": s, "items_per_s": rate[k]}
                                                  for k, (n, s) in runs.items()}}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
