"""`owl-memory demo`: a memory about DC Terms (shipped inside owlready2) built, searched and read back."""

from __future__ import annotations

from pathlib import Path

from rdflib import Graph, URIRef
from rdflib.namespace import RDFS, SKOS
from rdflib.term import Node

from .model import ItemSpec
from .rdfio import load_graph
from .resources import dependency_ontology
from .store import Memory
from .vocab import local_name

DCTERMS = "http://purl.org/dc/terms/"
TASK = "metadata-annotation"


def dcterms_graph() -> Graph:
    """DC Terms as distributed inside the installed owlready2 package."""
    return load_graph(dependency_ontology("dcterms"))


def run_demo(path: Path) -> dict[str, object]:
    """Build the demo memory at `path`, run three searches, read one capped window; returns what it saw."""
    g = dcterms_graph()
    with Memory(path) as m:
        ranges = {p: r for p, r in g.subject_objects(RDFS.range) if isinstance(p, URIRef)}  # one range each
        ids = [_add_range_rule(m, g, p, ranges[p]) for p in sorted(ranges)]
        general = m.add(ItemSpec(
            "Principle", "Prefer DC Terms over DC Elements",
            "Use dcterms properties when describing resources, unless a legacy schema needs dc:.",
            "DC Terms refines the 15 DC Elements with ranges; prefer dcterms:creator to dc:creator.",
            applies_to=(DCTERMS,), task_types=(TASK,), priority=2, confidence=0.8))
        m.add(ItemSpec("Principle", "Keep dc elements for legacy OAI-PMH",
                       "Use dc: elements when the target is OAI-PMH.",
                       "OAI-PMH requires the oai_dc format, which only knows the 15 DC Elements.",
                       applies_to=(DCTERMS,), task_types=(TASK,), scope="exception", refines=general, confidence=0.7))
        searches = {
            "'creator agent'": m.search("creator agent", ontology=DCTERMS),
            f"--task-type {TASK} --kind Principle": m.search(task_type=TASK, kinds=["Principle"]),
            "'license rights'": m.search("license rights", kinds=["Constraint"], k=3),
        }
        top = searches["'creator agent'"][0].id
        return {"memory": str(path), "ontology": DCTERMS, "items": len(m), "added": len(ids) + 2,
                "searches": {name: [h.to_dict() for h in hits] for name, hits in searches.items()},
                "window": {"id": top, **m.window(top, 0, 160).to_dict()}}


def _add_range_rule(m: Memory, g: Graph, prop: URIRef, range_: Node) -> str:
    """One Constraint item per DC Terms property with a range: what its values must be."""
    name, rng = local_name(prop), local_name(range_)
    comment = " ".join(str(g.value(prop, RDFS.comment) or g.value(prop, SKOS.definition) or "").split())
    label = str(g.value(prop, RDFS.label) or name)
    content = (f"dcterms:{name} ({label}). Range: {range_}.\n"
               f"Definition: {g.value(prop, SKOS.definition) or ''}\nNote: {comment}")
    return m.add(ItemSpec("Constraint", f"dcterms:{name} values are {rng}",
                          f"Use when stating dcterms:{name}; its value should be a {rng}.", content,
                          applies_to=(DCTERMS,), task_types=(TASK,), tags=(name, rng), confidence=0.9))

