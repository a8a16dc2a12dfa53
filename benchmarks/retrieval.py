"""Retrieval benchmark: open, search and validated add on 1k/10k/100k-item memories, against rdflib in the same run.

Run: python benchmarks/retrieval.py [--sizes 1000,10000,100000] [--queries 200] [--quick] [--rebuild] [--json OUT]

Memories are generated deterministically (seeded), built once and cached under --cache-dir keyed by size; every
run measures a fresh copy of the cached memory, so the validated adds it makes never leak into the cache.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from rdflib import Graph, Literal, URIRef
from rdflib.plugins.sparql import prepareQuery

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from owl_memory import ItemSpec, Memory  # noqa: E402
from owl_memory.store import retrieval  # noqa: E402
from owl_memory.store.items import task_type_iri  # noqa: E402
from owl_memory.vocab import ITEM, OM  # noqa: E402

FORMAT = 2  # bump when the generator changes: it is part of the cache key
SEED = 20261122
VALIDATED_BUILD = 200  # items of every memory written through Memory.add (pyshacl) before the bulk path
SUPERSEDED_SHARE = 100  # one item in this many is superseded (through Memory.supersede, validated)
K = 5
KINDS = ("Principle", "Procedure", "AntiPattern", "Constraint")
ONTOLOGIES = tuple(f"http://example.org/{n}#" for n in (
    "prov foaf skos dcat schema geo time org sosa ssn qudt gist fibo bfo obi go chebi uberon envo pato iao ro cl "
    "doid hp mondo ncit snomed dbo wd crm dcterms vcard odrl adms locn gr bibo fabio cito oa sioc ldp void shex "
    "brick saref seas pext ical").split())
TASK_TYPES = tuple(
    "shacl repair|sparql query|ontology alignment|class design|property design|cq authoring|data validation|"
    "mapping|entity linking|taxonomy cleanup|axiom debugging|reasoner setup|import resolution|naming|"
    "documentation|versioning|provenance capture|unit modelling|temporal modelling|geo modelling".split("|"))
WORDS = tuple(
    "class property domain range shape constraint violation mincount maxcount datatype literal iri blank node "
    "subclass superclass individual axiom restriction cardinality inverse functional transitive symmetric "
    "label comment annotation import ontology vocabulary namespace prefix query select construct ask filter "
    "optional union graph triple pattern binding variable value path sequence alternative closed pattern "
    "language tag string integer date decimal boolean unit quantity measurement observation sensor feature "
    "agent activity entity generation derivation attribution person organization place event interval instant "
    "concept scheme broader narrower exact match mapping alignment equivalent disjoint deprecated version "
    "release changelog review test fixture report result focus severity message repair patch delta minimal "
    "rollback verify conform reasoner inference consistency satisfiable hermit pellet owl rdf turtle jsonld "
    "parse serialize export load cache index search retrieve rank score priority confidence exception general "
    "rule principle procedure antipattern pitfall avoid prefer always never check before after when unless "
    "endpoint timeout limit offset order group count distinct aggregate federated service remote local".split())
TAGS = ("sparql", "shacl", "owl", "rdf", "skos", "prov", "units", "time", "geo", "naming", "perf", "safety")
SHAPES = ("ontology+task+text", "ontology+task", "ontology+kinds", "text")
_WEIGHTS = tuple(1 / (r + 1) ** 0.8 for r in range(len(WORDS)))  # Zipf-like: a few common words, a long tail


# ---- generated items ----
def words(rng: random.Random, n: int) -> list[str]:
    """n vocabulary words drawn with a Zipf-like skew."""
    return rng.choices(WORDS, weights=_WEIGHTS, k=n)


def item_spec(rng: random.Random, n: int) -> ItemSpec:
    """The n-th generated item (about 15 triples once stored)."""
    title = " ".join(words(rng, rng.randint(3, 8)))
    onto = rng.sample(ONTOLOGIES, 2 if rng.random() < 0.15 else 1)
    return ItemSpec(
        kind=rng.choice(KINDS), title=title,
        summary=f"Use when {' '.join(words(rng, 5))}; not when {' '.join(words(rng, 3))}.",
        content=f"# {title}\nitem {n}\n" + "\n".join(f"{s + 1}. {' '.join(words(rng, 12))}" for s in range(4)),
        applies_to=onto, task_types=[rng.choice(TASK_TYPES)], tags=[rng.choice(TAGS)],
        priority=rng.randint(0, 9), confidence=round(rng.uniform(0.05, 0.99), 2),
    )


def item_specs(size: int, start: int = 0, salt: str = "items") -> list[ItemSpec]:
    """Deterministic item specs number start..start+size-1."""
    rng = random.Random(f"{SEED}-{salt}-{start}-{size}")
    return [item_spec(rng, start + n) for n in range(size)]


# ---- building the memory ----
def build(cache: Path, size: int) -> dict:
    """Build a size-item memory in cache/memory plus its N-Triples export; returns build statistics."""
    specs, stats = item_specs(size), {"size": size}
    with Memory(cache / "memory") as m:
        t = time.perf_counter()
        stats["build_add_ms"] = summary_ms([timed(m.add, s)[1] for s in specs[:VALIDATED_BUILD]])
        stats["bulk_s"] = timed(m.add_many, specs[VALIDATED_BUILD:], batch=5000, validate=False)[1] / 1000
        stats["superseded"] = supersede_some(m, specs, size // SUPERSEDED_SHARE)
        stats["sample_conforming"] = validate_sample(m, specs[VALIDATED_BUILD:], 100)
        stats["build_s"] = round(time.perf_counter() - t, 1)
        stats["items"] = len(m)
        g, stats["to_rdflib_s"] = timed(m.to_graph)
        stats["to_rdflib_s"] /= 1000
        stats["triples"] = len(g)
        g.serialize(destination=str(cache / "items.nt"), format="nt", encoding="utf-8")
    if stats["items"] != size:
        raise SystemExit(f"built {stats['items']} items for size {size}: generated ids collided; bump FORMAT")
    return stats


def supersede_some(m: Memory, specs: list[ItemSpec], n: int) -> int:
    """Supersede n items (each by another random item) through the validated Memory.supersede."""
    rng = random.Random(f"{SEED}-supersede-{len(specs)}")
    ids = [s.id for s in specs]
    pairs = [(old, new) for old, new in zip(rng.sample(ids, n), rng.sample(ids, n), strict=True) if old != new]
    for old, new in pairs:
        m.supersede(old, new)
    return len(pairs)


def validate_sample(m: Memory, specs: list[ItemSpec], n: int) -> str:
    """Validate n random bulk-loaded items exactly as Memory.add would (item + context, pyshacl)."""
    sample = random.Random(f"{SEED}-sample").sample(specs, min(n, len(specs)))
    ok = sum(m.validate(ids=[s.id])["conforms"] for s in sample)
    return f"{ok}/{len(sample)}"


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


# ---- queries ----
def query_set(n: int, salt: str) -> list[tuple[str, dict]]:
    """n deterministic agent queries cycling over SHAPES: (shape, Memory.search keyword arguments)."""
    rng = random.Random(f"{SEED}-queries-{salt}")
    out = []
    for q in range(n):
        shape = SHAPES[q % len(SHAPES)]
        kw: dict = {"k": K}
        if "ontology" in shape:
            kw["ontology"] = rng.choice(ONTOLOGIES)
        if "task" in shape:
            kw["task_type"] = rng.choice(TASK_TYPES)
        if "kinds" in shape:
            kw["kinds"] = rng.sample(KINDS, rng.randint(1, 2))
        if "text" in shape:
            kw["text"] = " ".join(words(rng, rng.randint(2, 4)))
        out.append((shape, kw))
    return out


def tokens(text: str) -> list[str]:
    """The words of a text as Memory's search uses them (lower case, unique, capped)."""
    return list(retrieval.words(text))


# ---- rdflib baseline ----
_PREFIX = "PREFIX om: <http://w3id.org/owl-memory#>\n"


def sparql(shape: str, kinds: int, ntokens: int):
    """The prepared SPARQL of a query shape: same filters, superseded exclusion and ordering as Memory.search."""
    body = []
    if "ontology" in shape:
        body.append("?s om:appliesToOntology ?ontology .")
    if "task" in shape:
        body.append("?s om:appliesToTaskType ?task .")
    if "kinds" in shape:
        body.append(f"?s a ?kind . FILTER(?kind IN ({', '.join(f'?k{j}' for j in range(kinds))}))")
    body.append("?s om:title ?title . ?s om:summary ?summary .")
    if ntokens:
        body.append("OPTIONAL { ?s om:tag ?tag } BIND(LCASE(CONCAT(?title, ' ', ?summary, ' ', COALESCE(?tag, ''))) "
                    "AS ?doc)")
        body.append(f"BIND(({' + '.join(f'IF(CONTAINS(?doc, ?w{j}), 1, 0)' for j in range(ntokens))}) AS ?score) "
                    "FILTER(?score > 0)")
    else:
        body.append("BIND(0 AS ?score)")
    body.append("OPTIONAL { ?s om:priority ?pr } OPTIONAL { ?s om:confidence ?cf }")
    body.append("FILTER NOT EXISTS { ?newer om:supersedes ?s }")
    text = (_PREFIX + "SELECT ?s WHERE {\n  " + "\n  ".join(body) + "\n}\n"
            f"ORDER BY DESC(?score) DESC(COALESCE(?pr, 0)) DESC(COALESCE(?cf, 0)) ASC(STR(?s)) LIMIT {K}")
    return prepareQuery(text)


class Baseline:
    """Memory.search's semantics as prepared SPARQL on an in-memory rdflib Graph, values bound by initBindings."""

    def __init__(self, graph: Graph):
        """Wrap an rdflib Graph; queries are prepared once per (shape, kinds, tokens) key."""
        self.graph, self.prepared = graph, {}

    def search(self, shape: str, kw: dict) -> list[str]:
        """Item ids of one query, best first."""
        kinds, toks = list(kw.get("kinds") or []), tokens(kw.get("text") or "")
        key = (shape, len(kinds), len(toks))
        if key not in self.prepared:
            self.prepared[key] = sparql(*key)
        bind = {f"k{j}": OM[k] for j, k in enumerate(kinds)} | {f"w{j}": Literal(w) for j, w in enumerate(toks)}
        if "ontology" in kw:
            bind["ontology"] = URIRef(kw["ontology"])
        if "task_type" in kw:
            bind["task"] = task_type_iri(kw["task_type"])
        rows = self.graph.query(self.prepared[key], initBindings=bind)
        return [str(r[0])[len(str(ITEM)):] for r in rows]


# ---- measuring ----
def timed(fn, *args, **kwargs):
    """(result, milliseconds) of one call."""
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, (time.perf_counter() - t) * 1000


def pct(xs: list[float], p: float) -> float:
    """The p-th percentile (nearest rank) of xs."""
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s) + 0.5) - 1))]


def summary_ms(xs: list[float]) -> dict:
    """p50/p95/max/mean of a list of milliseconds."""
    return {"p50": round(pct(xs, 50), 3), "p95": round(pct(xs, 95), 3), "max": round(max(xs), 3),
            "mean": round(statistics.fmean(xs), 3), "n": len(xs)}


def by_shape(times: list[tuple[str, float]], mix: dict | None = None) -> dict:
    """Latency summaries per query shape and overall; `mix` (queries per shape) reweights a partial run's overall."""
    per = {s: [t for sh, t in times if sh == s] for s in SHAPES if any(sh == s for sh, _ in times)}
    mixed = [t for s, ts in per.items() for t in (ts * mix[s])[: mix[s]]] if mix else [t for _, t in times]
    return {s: summary_ms(ts) for s, ts in per.items()} | {"all": summary_ms(mixed)}


def measure_memory(work: Path, queries: list, warmup: list, adds: int) -> tuple[dict, dict]:
    """Open, search and validated-add timings of the memory in `work`; also returns search results by query."""
    m, open_ms = timed(Memory, work)
    try:
        first = timed(m.search, **queries[0][1])[1]
        for _, kw in warmup:
            m.search(**kw)
        results, times = {}, []
        for q, (shape, kw) in enumerate(queries):
            results[q], ms = timed(m.search, **kw)
            times.append((shape, ms))
        n = len(m)
        new = item_specs(adds + 10, start=n, salt="adds")
        for s in new[:10]:
            m.add(s)  # warm-up: pyshacl caches, statement cache
        add_times = [timed(m.add, s)[1] for s in new[10:]]
    finally:
        m.close()
    reopen = [timed(lambda: Memory(work).close())[1] for _ in range(3)]
    stats = {"open_ms": round(open_ms, 1), "reopen_ms": round(statistics.median(reopen), 1),
             "first_search_ms": round(first, 2), "search": by_shape(times), "add": summary_ms(add_times)}
    return stats, {q: [h["id"] for h in hits] for q, hits in results.items()}


def measure_rdflib(nt: Path, queries: list, warmup: list, budget_s: float) -> tuple[dict, dict]:
    """Load and search timings of the rdflib baseline (per shape until budget_s is spent, at least 3 queries)."""
    g, load_ms = timed(lambda: Graph().parse(str(nt), format="nt"))
    base = Baseline(g)
    for shape, kw in warmup[: len(SHAPES)]:
        base.search(shape, kw)
    results, times, spent = {}, [], dict.fromkeys(SHAPES, 0.0)
    for q, (shape, kw) in enumerate(queries):
        if spent[shape] > budget_s * 1000 and sum(sh == shape for sh, _ in times) >= 3:
            continue
        results[q], ms = timed(base.search, shape, kw)
        times.append((shape, ms))
        spent[shape] += ms
    mix = {shape: sum(s == shape for s, _ in queries) for shape in SHAPES}
    return {"load_ms": round(load_ms, 1), "triples": len(g), "search": by_shape(times, mix)}, results


def agreement(queries: list, mine: dict, theirs: dict) -> dict:
    """Share of compared queries where both engines return the same ids in the same order, per shape."""
    out = {}
    for shape in SHAPES:
        qs = [q for q, (s, _) in enumerate(queries) if s == shape and q in theirs]
        same = sum(mine[q] == theirs[q] for q in qs)
        out[shape] = {"same": same, "compared": len(qs)}
    return out


def run_size(cache_root: Path, size: int, args) -> dict:
    """Every measurement of one memory size."""
    cache, build_stats = cached_memory(cache_root, size, args.rebuild)
    load_before = os.getloadavg()[0]
    queries, warmup = query_set(args.queries, "measure"), query_set(50, "warmup")
    with tempfile.TemporaryDirectory(dir=cache_root) as tmp:
        work = Path(tmp) / "memory"
        shutil.copytree(cache / "memory", work)
        mem, mine = measure_memory(work, queries, warmup, args.adds)
    base, theirs = measure_rdflib(cache / "items.nt", queries, warmup, args.rdflib_seconds)
    return {"size": size, "build": build_stats, "memory": mem, "rdflib": base, "load_average": [
            round(load_before, 2), round(os.getloadavg()[0], 2)],
            "agreement": agreement(queries, mine, theirs)}


# ---- report ----
def table(r: dict) -> str:
    """A plain-text table of one size's results."""
    mem, base, b = r["memory"], r["rdflib"], r["build"]
    lines = [f"\n== {r['size']:,} items, {b['triples']:,} triples (built in {b['build_s']} s; bulk-loaded items "
             f"conforming in a validated sample: {b['sample_conforming']}) ==",
             f"(1-minute load average before/after on {os.cpu_count()} cores: {r['load_average'][0]}/"
             f"{r['load_average'][1]}; other processes skew every timing)",
             f"{'metric':<34}{'owl-memory':>12}{'rdflib':>12}{'rdflib/mem':>12}"]

    def row(name, a, c=None):
        """One table line: owl-memory value, rdflib value and their ratio."""
        ratio = f"{c / a:.1f}x" if c is not None and a else ""
        lines.append(f"{name:<34}{a:>12.3f}{'' if c is None else f'{c:>12.3f}':>12}{ratio:>12}")

    row("open / load (ms)", mem["open_ms"], base["load_ms"])
    row("first search after open (ms)", mem["first_search_ms"])
    row("reopen + close, median of 3 (ms)", mem["reopen_ms"])
    for shape, s in mem["search"].items():
        other = base["search"].get(shape)
        row(f"search {shape} p50 (ms)", s["p50"], other and other["p50"])
        row(f"search {shape} p95 (ms)", s["p95"], other and other["p95"])
    lines.append("rdflib queries measured per shape: " + ", ".join(
        f"{sh}: {v['n']}" for sh, v in base["search"].items() if sh != "all") + " (overall: weighted to the same mix)")
    row("validated add p50 (ms)", mem["add"]["p50"])
    row("validated add p95 (ms)", mem["add"]["p95"])
    agree = ", ".join(f"{s}: {a['same']}/{a['compared']}" for s, a in r["agreement"].items() if a["compared"])
    lines.append(f"same ids, same order as rdflib: {agree}")
    lines.append("(text shapes: owl-memory ranks by FTS5 bm25 over word tokens, rdflib by the count of tokens found "
                 "with CONTAINS(LCASE(...)); their results are expected to differ)")
    return "\n".join(lines)


def targets(r: dict) -> str:
    """The design targets checked against one size's results."""
    mem, base = r["memory"], r["rdflib"]
    p95 = mem["search"]["all"]["p95"]
    worst = min(base["search"][s]["p95"] / mem["search"][s]["p95"] for s in SHAPES if s in base["search"])
    checks = [("search p95 <= 2 ms", p95 <= 2), (f"rdflib/mem p95 >= 20x in every shape ({worst:.1f}x)", worst >= 20),
              ("validated add p95 <= 10 ms", mem["add"]["p95"] <= 10), ("open <= 1 s", mem["open_ms"] <= 1000)]
    return "targets (set for 100k): " + ", ".join(f"{name}: {'ok' if ok else 'MISSED'}" for name, ok in checks)


def main(argv=None) -> int:
    """Parse options, run every size, print the tables."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1000,10000,100000", help="comma-separated memory sizes (items)")
    p.add_argument("--quick", action="store_true", help="1k and 10k only (CI-sized)")
    p.add_argument("--queries", type=int, default=200, help="measured queries per size (4 shapes, round robin)")
    p.add_argument("--adds", type=int, default=200, help="validated Memory.add calls measured per size")
    p.add_argument("--rdflib-seconds", type=float, default=60.0,
                   help="time budget per query shape for rdflib (it stops early, after at least 3 queries)")
    p.add_argument("--cache-dir", type=Path, default=Path(tempfile.gettempdir()) / "owl-memory-bench")
    p.add_argument("--rebuild", action="store_true", help="rebuild cached memories")
    p.add_argument("--json", type=Path, help="also write every number as JSON to this file")
    args = p.parse_args(argv)
    sizes = [1000, 10000] if args.quick else [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.queries < len(SHAPES) or any(s < VALIDATED_BUILD * 2 for s in sizes):
        p.error(f"use --queries >= {len(SHAPES)} and sizes >= {VALIDATED_BUILD * 2}")
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    results = []
    for size in sizes:
        results.append(run_size(args.cache_dir, size, args))
        print(table(results[-1]), targets(results[-1]), sep="\n", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0 if all(a["same"] == a["compared"] for r in results for s, a in r["agreement"].items()
                    if "text" not in s) else 1


if __name__ == "__main__":
    sys.exit(main())
