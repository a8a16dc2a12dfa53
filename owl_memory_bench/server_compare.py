"""The server benchmark's work: the same items and queries on an embedded memory and on a SPARQL server (bulk load,
interleaved searches, validated adds), then agent processes writing and searching at once on each."""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from pathlib import Path

from owl_memory import Memory

from .retrieval.generator import item_specs, query_set
from .retrieval.measure import by_shape
from .servers import Oxigraph
from .timing import summary_ms, timed


def load(location, specs) -> float:
    """Bulk-load specs (trusted, unvalidated) into the memory at `location`; seconds."""
    with Memory(location) as m:
        return timed(m.add_many, specs, batch=500, validate=False)[1] / 1000


def searches(local: Memory, server: Memory, queries: list) -> dict:
    """Interleaved search latencies on both backends, how many results agree exactly and the HTTP requests each
    server search sent (the client's count), per shape."""
    for _, kw in queries[:10]:
        local.search(**kw)
        server.search(**kw)
    a, b, same = [], [], 0
    requests: dict[str, list[int]] = {}
    client = server.backend.client
    for shape, kw in queries:
        x, ms = timed(local.search, **kw)
        a.append((shape, ms))
        before = client.requests
        y, ms = timed(server.search, **kw)
        requests.setdefault(shape, []).append(client.requests - before)
        b.append((shape, ms))
        same += [h.id for h in x] == [h.id for h in y]
    per = {s: {"mean": round(sum(n) / len(n), 2), "max": max(n)} for s, n in requests.items()}
    return {"embedded": by_shape(a), "server": by_shape(b), "same_results": f"{same}/{len(queries)}",
            "requests": per}


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
        before = m.get(shared).use_count
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
        uses = m.get(shared).use_count - before
    done = len(ids)
    return {"agents": count, "ops_per_agent": ops, "completed_rounds": done, "wall_s": round(wall, 2),
            "rounds_per_s": round(done / wall, 1), "lost_adds": done - stored,
            "lost_uses": done - uses, "errors": [e for r in reports for e in r["errors"]][:4]}


def run_size(size: int, work: Path, *, query_count: int, add_count: int, agent_count: int, ops: int) -> dict:
    """Every measurement for one memory size: `query_count` searches and `add_count` validated adds on each backend,
    then `agent_count` processes of `ops` rounds each."""
    specs = item_specs(size)
    server = Oxigraph(work / f"oxigraph-{size}")
    try:
        local_dir = work / f"embedded-{size}"
        out = {"size": size, "load_avg_before": round(os.getloadavg()[0], 2),
               "load_s": {"embedded": round(load(local_dir, specs), 1),
                                        "server": round(load(server.url, specs), 1)}}
        queries = query_set(query_count, salt=f"server-{size}")
        new = item_specs(add_count + 5, start=size, salt="server-adds")
        with Memory(local_dir) as local, Memory(server.url) as remote:
            out["search"] = searches(local, remote, queries)
            out["add"] = {"embedded": adds(local, new), "server": adds(remote, new)}
        out["agents"] = {"server": agents(server.url, agent_count, ops),
                         "embedded": agents(str(local_dir), agent_count, ops)}
        out["load_avg_after"] = round(os.getloadavg()[0], 2)
        return out
    finally:
        server.stop()
