"""One size of the retrieval benchmark: the cached generated memory, then every timing (owl-memory, rdflib,
owlready2 native) and whether the engines agree."""

from __future__ import annotations

import gc
import json
import os
import random
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from owl_memory import ItemSpec, Memory
from owl_memory.store.server.layout import GRAPH_ITEMS

from ..timing import summary_ms, timed
from .baselines import BASELINES, Baseline, Native, rdflib_dataset
from .generator import FORMAT, SEED, SHAPES, SUPERSEDED_SHARE, VALIDATED_BUILD, item_specs, query_set, supersede_some


def build(cache: Path, size: int) -> dict:
    """Build a size-item memory in cache/memory plus its N-Triples export; returns build statistics."""
    specs, stats = item_specs(size), {"size": size}
    with Memory(cache / "memory") as m:
        t = time.perf_counter()
        stats["build_add_ms"] = summary_ms([timed(m.add, s)[1] for s in specs[:VALIDATED_BUILD]])
        stats["bulk_s"] = timed(m.add_many, specs[VALIDATED_BUILD:], batch=5000, validate=False)[1] / 1000
        stats["superseded"] = supersede_some(m, specs, size // SUPERSEDED_SHARE)
        stats["build_s"] = round(time.perf_counter() - t, 1)
        stats["sample_conforming"], stats["sample_ms"] = validate_sample(m, specs[VALIDATED_BUILD:], 100)
        stats["items"] = len(m)
        db = m.backend.db  # the quadstore's two triple tables (owlready2), the whole graph as to_graph gives it
        stats["triples"] = sum(db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("objs", "datas"))
    if stats["items"] != size:
        raise SystemExit(f"built {stats['items']} items for size {size}: generated ids collided; bump FORMAT")
    return stats


def export(cache: Path) -> None:
    """The cached memory's N-Triples export (what the baselines load), written once."""
    nt = cache / "items.nt"
    if not nt.exists():
        with Memory(cache / "memory", create=False) as m:
            m.to_graph().serialize(destination=str(nt.with_suffix(".part")), format="nt", encoding="utf-8")
        nt.with_suffix(".part").rename(nt)


def validate_sample(m: Memory, specs: list[ItemSpec], n: int) -> tuple[str, dict]:
    """Validate n random bulk-loaded items exactly as Memory.add would (item + context, pyshacl): how many conform,
    and the p50 / p95 of one item's Memory.validate(ids=[...]) (ms)."""
    sample = random.Random(f"{SEED}-sample").sample(specs, min(n, len(specs)))
    results = [timed(m.validate, ids=[s.id]) for s in sample]
    ok = sum(report.conforms for report, _ in results)
    return f"{ok}/{len(sample)}", summary_ms([ms for _, ms in results])


def cached_memory(cache_root: Path, size: int, rebuild: bool) -> tuple[Path, dict]:
    """The cache directory of a size (built when missing or on --rebuild) and its build statistics."""
    cache = cache_root / f"retrieval-v{FORMAT}-n{size}"
    meta = cache / "meta.json"
    if rebuild or not meta.exists():
        shutil.rmtree(cache, ignore_errors=True)
        cache.mkdir(parents=True)
        print(f"building the {size}-item memory in {cache} ...", flush=True)
        meta.write_text(json.dumps(build(cache, size), indent=1))  # written last: marks the cache complete
    return cache, json.loads(meta.read_text())


def measure(work: Path, nt: Path | None, specs: list[ItemSpec], queries: list, warmup: list, adds: int,
            budget_s: float) -> dict:
    """Every timing of one size: rdflib's load, then owl-memory's open, then each query on every engine in turn
    (owl-memory, rdflib, and owlready2 native for shapes without text; each baseline within budget_s per shape),
    then validated adds; also each engine's ids by query. `nt` None: owl-memory alone, no baseline."""
    ds, load_ms = timed(rdflib_dataset, nt, specs) if nt is not None else (None, 0.0)
    gc.freeze()  # the parsed graph's millions of objects stay out of every later collection (both engines gain)
    m, open_ms = timed(Memory, work)
    try:
        first = timed(m.search, **queries[0][1])[1]
        engines = {"memory": lambda shape, kw: [h.id for h in m.search(**kw)]}
        if ds is not None:
            engines |= {"owlready2": Native(m.backend.quadstore).search, "rdflib": Baseline(ds).search}
        for n, (shape, kw) in enumerate(warmup[: 2 * len(SHAPES)]):
            for name, run in engines.items():  # baselines: every shape they run, once for text (seconds each)
                if name == "memory" or "text" not in shape or (name == "rdflib" and n < len(SHAPES)):
                    run(shape, kw)
        for _, kw in warmup:
            m.search(**kw)
        times, ids = {e: [] for e in engines}, {e: {} for e in engines}
        spent = {(e, s): 0.0 for e in BASELINES for s in SHAPES}
        for q, (shape, kw) in enumerate(queries):
            for name, run in engines.items():
                if name == "owlready2" and "text" in shape:
                    continue
                if name in BASELINES and spent[name, shape] > budget_s * 1000 and sum(
                        sh == shape for sh, _ in times[name]) >= (1 if "text" in shape else 3):
                    continue
                ids[name][q], ms = timed(run, shape, kw)
                times[name].append((shape, ms))
                if name in BASELINES:
                    spent[name, shape] += ms
        new = item_specs(adds + 10, start=len(m), salt="adds")
        for s in new[:10]:
            m.add(s)  # warm-up: pyshacl caches, statement cache
        add_times = [timed(m.add, s)[1] for s in new[10:]]
    finally:
        m.close()
        gc.unfreeze()
    reopen = [timed(lambda: Memory(work).close())[1] for _ in range(3)]
    mix = {shape: sum(s == shape for s, _ in queries) for shape in SHAPES}
    out = {"memory": {"open_ms": round(open_ms, 1), "reopen_ms": round(statistics.median(reopen), 1),
                      "first_search_ms": round(first, 2), "search": by_shape(times["memory"]),
                      "add": summary_ms(add_times), "rss_mb": round(resource.getrusage(resource.RUSAGE_SELF)
                                                                     .ru_maxrss / 1024),
                      "file_mb": {f.name: round(f.stat().st_size / 2**20, 1) for f in sorted(work.iterdir())
                                  if f.name.startswith(("memory.sqlite3", "blobs.sqlite3"))}},
           "agreement": {e: agreement(queries, ids["memory"], ids[e]) for e in engines if e != "memory"}}
    if ds is not None:
        out |= {"owlready2": {"search": by_shape(times["owlready2"], mix)},
                "rdflib": {"load_ms": round(load_ms, 1), "triples": len(ds.graph(GRAPH_ITEMS)),
                           "search": by_shape(times["rdflib"], mix)}}
    return out


def by_shape(times: list[tuple[str, float]], mix: dict | None = None) -> dict:
    """Latency summaries per query shape and overall; `mix` (queries per shape) reweights a partial run's overall."""
    per = {s: [t for sh, t in times if sh == s] for s in SHAPES if any(sh == s for sh, _ in times)}
    mixed = [t for s, ts in per.items() for t in (ts * mix[s])[: mix[s]]] if mix else [t for _, t in times]
    return {s: summary_ms(ts) for s, ts in per.items()} | {"all": summary_ms(mixed)}


def agreement(queries: list, mine: dict, theirs: dict) -> dict:
    """Share of compared queries where both engines return the same ids in the same order, per shape."""
    out = {}
    for shape in SHAPES:
        qs = [q for q, (s, _) in enumerate(queries) if s == shape and q in theirs]
        same = sum(mine[q] == theirs[q] for q in qs)
        out[shape] = {"same": same, "compared": len(qs)}
    return out


def run_size(cache_root: Path, size: int, *, queries: int, adds: int, baseline_seconds: float,
             rebuild: bool = False, baselines: bool = True) -> dict:
    """Every measurement of one memory size: `queries` measured searches, `adds` validated adds, each baseline
    within `baseline_seconds` per query shape (none without `baselines`); the memory is rebuilt first with
    `rebuild`."""
    cache, build_stats = cached_memory(cache_root, size, rebuild)
    if baselines:
        export(cache)
    load_before = os.getloadavg()[0]
    measured, warmup = query_set(queries, "measure"), query_set(50, "warmup")
    with tempfile.TemporaryDirectory(dir=cache_root) as tmp:
        work = Path(tmp) / "memory"
        shutil.copytree(cache / "memory", work)
        Memory(work).close()  # a cache built by an older owl-memory gets the current store format, untimed
        found = measure(work, cache / "items.nt" if baselines else None, item_specs(size), measured, warmup, adds,
                        baseline_seconds)
    return {"size": size, "build": build_stats, **found,
            "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)]}


