"""Held-out retrieval benchmark: does memory trained on some questions find what helps on questions it never saw?

Needs the shared data folder (OWL_MEMORY_DATA). No model: `--lm replay:` replays recorded queries (agent/replay.py)
through the real runner, endpoint tools, judge, extraction and consolidation.
- CK25 (TEXT2SPARQL): an Oxigraph on loopback serves the CK25 knowledge graph; the train split is trained (condition
  A2) by replaying one system's answers file (--system, default INFAI). Each held-out question's about-terms are
  its annotated `classes` and `properties`.
- UniProt's SHACL examples: an Oxigraph on loopback serves the UniProt core ontology (uniprot-core.ttl; no UniProt
  data); the train split is trained by replaying the examples' own reference queries. The examples carry no
  annotations, so a held-out example's about-terms are the classes (rdf:type objects) and properties (predicates)
  of its reference query.
For every held-out question, the relevant items are the stored items whose about-links overlap its about-terms;
R@k = |relevant among the first k| / min(k, |relevant|) (capped recall: 1 when the first k are all relevant or hold
every relevant item), averaged over the held-out questions that have a relevant item. Rankings: A1's selection
(the ids a real A1 run injects, read from its result; the EndpointProfile A1 pins first is left out: it is placed,
not selected) and memory_search called with the question's text and k=5, as a model would.
Run: python benchmarks/heldout_retrieval.py [--system INFAI] [--vocabulary] [--json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from rdflib import URIRef
from rdflib.namespace import RDF

from owl_memory import Memory
from owl_memory.adapters import sparql as sparql_text
from owl_memory.agent import run
from owl_memory.agent.recorded import question_text
from owl_memory.agent.replay import replay_lm
from owl_memory.datadir import data_dir
from owl_memory.learning import load_curriculum, map_endpoints, train_curriculum
from owl_memory.learning.tasks import Curriculum, Task
from owl_memory.model import RunConfig
from owl_memory_bench.servers import ck25_endpoint, default_graph_endpoint

CK25 = "https://text2sparql.aksw.org/2025/corporate/"
UNIPROT = "https://sparql.uniprot.org/sparql"
KS = (1, 3, 5)
MAX_ITERS = 4


def main() -> None:
    """Run both corpora and print (or --json) recall@1/3/5 of A1's selection and of memory_search."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--system", default="INFAI", help="CK25 system whose answers are replayed (INFAI, IIS-Q, ...)")
    parser.add_argument("--vocabulary", action="store_true",
                        help="train with each endpoint's vocabulary as the local ontology (train --ontology): "
                             "prod-vocab.ttl for CK25, uniprot-core.ttl for UniProt")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args()
    data = data_dir()
    with tempfile.TemporaryDirectory() as tmp:
        results = {"ck25": ck25(data, Path(tmp), args.system, args.vocabulary),
                   "uniprot": uniprot(data, Path(tmp), args.vocabulary)}
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for name, r in results.items():
        print(f"{name}: trained {r['trained']} questions ({r['succeeded']} answered right), memory {r['items']} "
              f"items; {r['measured']} of {r['held_out']} held-out questions have a relevant item")
        for how in ("a1", "memory_search"):
            print(f"  {how:<14}" + "  ".join(f"R@{k} {r[how][f'R@{k}']:.3f}" for k in KS))


def ck25(data: Path, tmp: Path, system: str, vocabulary: bool) -> dict:
    """CK25 trained by replaying `system`'s answers; the held-out figures."""
    folder = data / "text2sparql-ck25"
    server = ck25_endpoint(tmp / "ck25-store", data)
    try:
        course = load_curriculum(folder / "questions.yml", ontology=folder / "prod-vocab.ttl" if vocabulary else None)
        course, grants = map_endpoints(course, [f"{CK25}={server.url}/query"])
        return measure(course, grants, folder / "answers" / system / "ck25_answers.json", tmp / "ck25-memory",
                       lambda t: set(t.classes) | set(t.properties))
    finally:
        server.stop()


def uniprot(data: Path, tmp: Path, vocabulary: bool) -> dict:
    """UniProt's examples trained by replaying their own reference queries; the held-out figures."""
    core = data / "ontologies" / "uniprot-core.ttl"
    server = default_graph_endpoint(tmp / "uniprot-store", [core])
    try:
        course = load_curriculum(data / "ontologies" / "uniprot-examples", ontology=core if vocabulary else None)
        course, grants = map_endpoints(course, [f"{UNIPROT}={server.url}/query"])
        answers = tmp / "uniprot-answers.json"
        answers.write_text(json.dumps([{"qname": t.id, "question": t.query, "query": str(t.expect.gold)}
                                       for t in course.tasks if t.expect is not None]))
        return measure(course, grants, answers, tmp / "uniprot-memory", reference_terms)
    finally:
        server.stop()


def reference_terms(task: Task) -> set[str]:
    """The classes (rdf:type objects) and properties (predicates) the task's reference query uses."""
    try:
        triples, _ = sparql_text.patterns(sparql_text.parse(str(task.expect.gold if task.expect else "")))
    except sparql_text.QuerySyntaxError:
        return set()
    terms = {o for _, p, o in triples if p == RDF.type} | {p for _, p, _ in triples if p != RDF.type}
    return {str(t) for t in terms if isinstance(t, URIRef)}


def measure(course: Curriculum, grants, answers: Path, path: Path, about) -> dict:
    """Train the train split by replaying `answers`, then rank memory for every held-out task."""
    lm = replay_lm(f"replay:{answers}")
    config = RunConfig(lm=lm, condition="A2", endpoints=grants, max_iters=MAX_ITERS)
    with Memory(path) as memory:
        summary = train_curriculum(course, memory, config)
        rows = []
        for task in course.holdout:
            relevant = relevant_items(memory, about(task))
            if relevant:
                injected = a1_selection(memory, task, config)
                found = [h.id for h in memory.search(text=question_text(task.query), k=5)]
                rows.append({"task": task.id, "relevant": len(relevant), "a1_injected": len(injected),
                             "a1": recalls(injected, relevant), "memory_search": recalls(found, relevant)})
    return {"trained": summary.ran, "succeeded": summary.succeeded, "items": summary.items,
            "held_out": len(course.holdout), "measured": len(rows),
            **{how: {f"R@{k}": mean([r[how][k] for r in rows]) for k in KS} for how in ("a1", "memory_search")},
            "questions": rows}


def relevant_items(memory: Memory, terms: set[str]) -> set[str]:
    """The live items (not superseded, not archived) about any of `terms`, as a class or as a property."""
    return {h.id for t in terms for h in memory.search(about_class=t, k=50) + memory.search(about_property=t, k=50)}


def a1_selection(memory: Memory, task: Task, config: RunConfig) -> list[str]:
    """The items a real A1 run on the task injects, in order, without the EndpointProfiles A1 pins first."""
    result = run(task.query, memory=memory, config=RunConfig.of(config, condition="A1", task_id=task.id,
                                                                task_type=task.task_type))
    kinds = {i: memory.get(i).kind for i in result.memory_ids_used}
    return [i for i in result.memory_ids_used if kinds[i] != "EndpointProfile"]


def recalls(ranked: list[str], relevant: set[str]) -> dict[int, float]:
    """Capped recall at each k: relevant among the first k over min(k, |relevant|)."""
    return {k: len(set(ranked[:k]) & relevant) / min(k, len(relevant)) for k in KS}


def mean(values: list[float]) -> float:
    """The mean, 0 for none."""
    return sum(values) / len(values) if values else 0.0


if __name__ == "__main__":
    main()
