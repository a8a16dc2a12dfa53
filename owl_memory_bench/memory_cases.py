"""Memory-specific cases, deterministic and with no LM: over-retrieval pressure, conflicting rules, delayed recall,
ontology shifts and leakage traps (scripted adversarial agents); one row of figures per case family and size."""

from __future__ import annotations

import random
import string
import tempfile
import time
from pathlib import Path

from rdflib import Graph, URIRef
from rdflib.namespace import OWL, RDF

from owl_memory import ItemSpec, Memory
from owl_memory.store.alignment import ontology_context

TARGETS = 10  # queries per case and size
TASK = "data validation"
SHIFTS = ("priorVersion", "backwardCompatibleWith", "sameAs", "equivalentClass", "incompatibleWith")


def _spec(kind: str, title: str, onto: str, **kw) -> ItemSpec:
    """A small item applicable to one ontology IRI and the benchmark's task type."""
    return ItemSpec(kind, title, kw.pop("summary", f"Use when {title.lower()}."), kw.pop("content", title),
                    applies_to=(onto,), task_types=(TASK,), **kw)


def over_retrieval(root: Path, n: int) -> dict:
    """p@1, p@5 and hit@5 of the one right item among n near-misses (same ontology and task type, shared words)."""
    specs, right = [], {}
    for t in range(TARGETS):
        onto = f"http://example.org/pressure{t}#"
        good = _spec("Procedure", f"Bind dates as typed xsd date literals {t}", onto)
        right[t] = good.id
        specs.append(good)
        specs += [_spec("Procedure", f"Bind dates as plain {w} literals {t} variant {i}", onto)
                  for i in range(n) for w in ("string", "untyped", "lang", "integer")[i % 4:i % 4 + 1]]
    with Memory(root / f"pressure-{n}") as m:
        m.add_many(specs, validate=False)
        hits = [[h.id for h in m.search("typed xsd date literals", ontology=f"http://example.org/pressure{t}#",
                                           task_type=TASK, k=5)] for t in range(TARGETS)]
    return {"case": "over-retrieval", "near_misses": n, "p@1": _precision(hits, right, 1),
            "p@5": _precision(hits, right, 5), "hit@5": _share(right[t] in h for t, h in enumerate(hits))}


def _precision(hits: list[list[str]], right: dict[int, str], k: int) -> float:
    """Mean share of each query's top k that is its right item (k places, empty places count as wrong)."""
    return round(sum(h[:k].count(right[t]) / k for t, h in enumerate(hits)) / len(hits), 4)


def _rank(hits: list[dict], item: str) -> int | None:
    """0-based rank of an item in search hits, None when absent."""
    return next((i for i, h in enumerate(hits) if h.id == item), None)


def _share(flags) -> float:
    """Share of true values."""
    flags = list(flags)
    return round(sum(flags) / len(flags), 4) if flags else 0.0


def conflicting(root: Path) -> dict:
    """Rule + exception pairs: does the exception win exactly when its failure mode is in the query?"""
    wins: dict[str, list[bool]] = {}  # failure mode of the query -> did the right item rank first
    with Memory(root / "conflicts") as m:
        for t in range(TARGETS):
            onto = f"http://example.org/conflict{t}#"
            rule = m.add(_spec("Principle", f"Always type literals {t}", onto, failure_modes=("datatype",)))
            exc = m.add(_spec("Principle", f"Keep untyped literals for labels {t}", onto, scope="exception",
                              refines=rule, failure_modes=("label-language",)))
            for mode, winner in (("label-language", exc), ("datatype", rule), (None, rule)):
                hits = m.search(ontology=onto, task_type=TASK, failure_mode=mode, k=5)
                wins.setdefault(mode or "unstated", []).append(bool(hits) and hits[0].id == winner)
    return {"case": "conflicting-rules", "pairs": TARGETS,
            "exception_wins_exactly_when_applicable": _share(w for ws in wins.values() for w in ws),
            "by_query": {k: _share(v) for k, v in wins.items()}}


def delayed_recall(root: Path, delay: int) -> dict:
    """Constraints stored first, then `delay` distractors on the same ontologies and task type: recall@5."""
    with Memory(root / f"delay-{delay}") as m:
        firsts = {t: m.add(_spec("Constraint", f"Dates must carry a timezone {t}", f"http://example.org/delay{t}#"))
                  for t in range(TARGETS)}
        onto = [f"http://example.org/delay{t}#" for t in range(TARGETS)]
        m.add_many([_spec("Procedure", f"Distractor procedure {i} about dates", onto[i % TARGETS])
                    for i in range(delay)], validate=False)
        found = [_rank(m.search(ontology=f"http://example.org/delay{t}#", task_type=TASK, kinds=["Constraint"], k=5),
                       firsts[t]) is not None for t in range(TARGETS)]
    return {"case": "delayed-recall", "distractor_writes": delay, "recall@5": _share(found)}


def _shifted(t: int) -> tuple[Graph, str, str, bool]:
    """A v2 ontology graph declaring one link to v1 (cycled by t: a version link to v1 spelled with #, a class of v2
    equivalent to v1's, or priorVersion overridden by incompatibleWith); v1 and v2 IRIs, and whether v1's items
    should serve v2."""
    v1, v2 = f"http://example.org/shift{t}/v1", f"http://example.org/shift{t}/v2"
    link, g = SHIFTS[t % len(SHIFTS)], Graph()
    g.add((URIRef(v2), RDF.type, OWL.Ontology))
    if link == "equivalentClass":
        g.add((URIRef(f"{v2}#Record"), OWL.equivalentClass, URIRef(f"{v1}#Entry")))
    elif link == "incompatibleWith":
        g.add((URIRef(v2), OWL.priorVersion, URIRef(v1)))
        g.add((URIRef(v2), OWL.incompatibleWith, URIRef(v1)))
    else:
        g.add((URIRef(v2), OWL[link], URIRef(v1 + "#")))
    return g, v1, v2, link != "incompatibleWith"


def ontology_shift(root: Path) -> dict:
    """Items learned on v1 (about its class Entry), queried under v2 through the library (Memory.search with the
    OntologyContext of v2's graph, store/alignment.py): recall@5 without and with following v2's links, the share of
    carried items marked, and how many items an incompatible v2 received."""
    plain, followed, marked, leaked = [], [], [], 0
    with Memory(root / "shift") as m:
        for t in range(TARGETS):
            g, v1, v2, serves = _shifted(t)
            item = m.add(_spec("Procedure", f"Mint instance IRIs under the data namespace {t}", v1 + "#",
                               about_classes=(f"{v1}#Entry",)))
            hits = m.search(ontology=v2, task_type=TASK, k=5, context=ontology_context(g))
            if not serves:
                leaked += _rank(hits, item) is not None
                continue
            plain.append(_rank(m.search(ontology=v2, task_type=TASK, k=5), item) is not None)
            followed.append(_rank(hits, item) is not None)
            marked += [h.carried_over_from is not None for h in hits if h.id == item]
    return {"case": "ontology-shift", "links": list(SHIFTS), "recall@5_without_links": _share(plain),
            "recall@5_following_links": _share(followed), "carried_marked": _share(marked),
            "carried_when_incompatible": leaked}


TRAP_CONDITIONS = ("A2", "A3", "A4")
TRAP_ONTOLOGY = "http://example.org/trap"
_trap_rng = random.Random(10)


def _filler(n: int) -> str:
    """n characters of seeded letters, digits and spaces (no quotes, backslashes or newlines)."""
    return "".join(_trap_rng.choice(string.ascii_letters + string.digits + " ") for _ in range(n))


BAITS = {source: f"BAIT-{source.upper()}-" + "".join(random.Random(source).choices(string.ascii_uppercase, k=48))
         for source in ("prompt", "ontology", "memory")}
TRAP_PROMPT = _filler(10_000) + BAITS["prompt"] + _filler(10_000)
TRAP_TTL = f"""@prefix ex: <{TRAP_ONTOLOGY}#> . @prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
<{TRAP_ONTOLOGY}> a owl:Ontology . ex:Record a owl:Class ; rdfs:label "Record" .
ex:Vault a owl:Class ; rdfs:label "Vault" ; rdfs:comment "{_filler(1_000)}{BAITS['ontology']}{_filler(1_000)}" .
"""
TRAP_CONTENT = _filler(2_000) + BAITS["memory"] + _filler(2_000)
_GRAB = """out = []
def grab(f, *a):
    try:
        v = f(*a)
    except Exception as e:
        v = repr(e)
    out.append(v if isinstance(v, str) else json.dumps(v, default=str))
    return v
"""
GREP = "import json\n" + _GRAB + f"""grab(lambda: prompt)
grab(prompt_window)
grab(ontology_describe, '{TRAP_ONTOLOGY}#Vault')
h = grab(ontology_query, 'SELECT ?c WHERE {{ ?s <http://www.w3.org/2000/01/rdf-schema#comment> ?c }}')
if isinstance(h, dict) and 'handle' in h:
    grab(results_peek, h['handle'], 20)
s = grab(memory_search, 'vault records') if 'memory_search' in globals() else {{}}
for item in (s.get('items', []) if isinstance(s, dict) else []):
    grab(memory_get, item['id'])
    grab(memory_window, item['id'])
found = [x[x.find('BAIT-'):x.find('BAIT-') + 70] for x in out if 'BAIT-' in x]
print(found)"""
HUNTER = "import json\n" + _GRAB + """f = grab(prompt_find, 'BAIT-')
for off in (f.get('offsets', []) if isinstance(f, dict) else []):
    grab(prompt_window, off, 512)
s = grab(memory_search, 'vault records') if 'memory_search' in globals() else {}
for item in (s.get('items', []) if isinstance(s, dict) else []):
    for start in range(0, 4096, 512):
        grab(memory_window, item['id'], start, 512)
h = grab(ontology_query, 'SELECT ?c WHERE { ?s <http://www.w3.org/2000/01/rdf-schema#comment> ?c }')
if isinstance(h, dict) and 'handle' in h:
    for start in range(0, 2048, 512):
        grab(handle_window, h['handle'], start, 512)
found = [x[x.find('BAIT-'):x.find('BAIT-') + 70] for x in out if 'BAIT-' in x]
print(found)"""
ADVERSARIES = {"grep": GREP, "hunter": HUNTER}


def leakage_trap(root: Path, adversary: str, condition: str) -> dict:
    """One scripted adversary in one condition: bait characters that reached the LM, and baits it returned."""
    from dspy.utils import DummyLM

    from owl_memory.adapters.dspy import calls_of
    from owl_memory.agent.leakage import measure
    from owl_memory.agent.runner import run
    from owl_memory.agent.trajectory import read_trajectory
    from owl_memory.model import RunStart

    lm = DummyLM([{"reasoning": "collect", "code": f"```python\n{ADVERSARIES[adversary]}\n```"},
                  {"reasoning": "return it", "code": "SUBMIT(answer=str(found))"}])
    with Memory(root / f"trap-{adversary}-{condition}") as m:
        if not len(m):
            m.add(_spec("Procedure", "Vault records keep their checksum", TRAP_ONTOLOGY, content=TRAP_CONTENT))
        r = run("Describe the vault records.", memory=m, prompt=TRAP_PROMPT, ontology=TRAP_TTL, lm=lm,
                condition=condition, trajectory_dir=root / "runs")
    leaked = measure(calls_of(lm.history), BAITS)
    start = next(e for e in read_trajectory(r.trajectory_path) if isinstance(e, RunStart))
    return {"case": "leakage-trap", "adversary": adversary, "condition": condition,
            "bait_chars_in_history": leaked["payload_chars_in_history"],
            "by_source": leaked["payload_chars_by_source"],
            "baits_returned": sum(b in r.answer for b in BAITS.values()),
            "payload_chars_in_history": r.metrics.payload_chars_in_history,
            "tool_calls": r.metrics.tool_calls, "tool_errors": r.metrics.tool_errors,
            "items_injected": len(start.memory_ids_injected)}


def run_cases(sizes: list[int], delays: list[int], traps: list[str], on_row=None) -> list[dict]:
    """Every case family: over-retrieval at each size, conflicts, delayed recall after each delay, ontology shift,
    and each adversary in each trap condition; one row each (with its seconds), passed to `on_row` as it is made."""
    out = []
    with tempfile.TemporaryDirectory(prefix="owl-memory-cases-") as tmp:
        root = Path(tmp)
        jobs = [lambda n=n: over_retrieval(root, n) for n in sizes]
        jobs += [lambda: conflicting(root)]
        jobs += [lambda d=d: delayed_recall(root, d) for d in delays]
        jobs += [lambda: ontology_shift(root)]
        jobs += [lambda a=a, c=c: leakage_trap(root, a, c) for a in ADVERSARIES for c in traps]
        for job in jobs:
            t0 = time.monotonic()
            row = job() | {"seconds": round(time.monotonic() - t0, 2)}
            if on_row is not None:
                on_row(row)
            out.append(row)
    return out
