"""`owl-memory demo`: a memory about DC Terms (shipped inside owlready2) built, searched and read back."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rdflib import Graph, URIRef
from rdflib.namespace import RDFS, SKOS
from rdflib.term import Node

from .model import Hit, ItemSpec, Window
from .rdfio import load_graph
from .resources import dependency_ontology
from .store import Memory
from .vocab import local_name

DCTERMS = "http://purl.org/dc/terms/"
TASK = "metadata-annotation"


def dcterms_graph() -> Graph:
    """DC Terms as distributed inside the installed owlready2 package."""
    return load_graph(dependency_ontology("dcterms"))


@dataclass(frozen=True)
class DemoReport:
    """What the demo built and saw: the memory, its ontology, its size, the items it added, three searches (as
    `owl-memory search` would be called -> hits) and one capped window of the top hit's content."""

    memory: str
    ontology: str
    items: int
    added: int
    searches: dict[str, list[Hit]]
    top: str
    window: Window

    def to_dict(self) -> dict:
        """JSON form (`owl-memory demo --json`)."""
        return {"memory": self.memory, "ontology": self.ontology, "items": self.items, "added": self.added,
                "searches": {name: [h.to_dict() for h in hits] for name, hits in self.searches.items()},
                "window": {"id": self.top, **self.window.to_dict()}}


def run_demo(path: Path) -> DemoReport:
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
        return DemoReport(str(path), DCTERMS, len(m), len(ids) + 2, searches, top, m.window(top, 0, 160))


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

