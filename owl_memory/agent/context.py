"""Context layers (a layer cake L0-L3): bounded, deterministic text computed from the ontology, memory and a guide.

L0 is a sense card of the ontology (size, namespaces, top classes and properties), L1 its schema constraints and
anti-patterns (OWL restrictions and characteristics, SHACL shapes in the graph, memory AntiPattern titles), L3 an
extractive summary of a guide. L2 (memory text injected into the prompt) is condition A1, not a layer here.
Each layer is cut at a line boundary to its bound in characters; the same inputs always give the same text.
The runner hands each layer to the RLM as its own input variable (FIELDS), whose preview the model sees whole.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.collection import Collection
from rdflib.namespace import DC, DCTERMS, SKOS
from rdflib.term import Node

from ..errors import ConfigError
from ..model import LayerBrief
from ..model.runs import MAX_BUDGET, parse_layers
from ..vocab import OWL, RDF, RDFS, SH, local_name
from .endpoint_profiles import find_profile, summary

if TYPE_CHECKING:
    from ..store import Memory

BOUNDS = {"L0": 600, "L1": 1000, "L3": 1000}
FIELDS = {"L0": "ontology_card", "L1": "schema_constraints", "L3": "guide_summary"}  # the RLM's input variables
MAX_BOUND = MAX_BUDGET  # dspy.RLM previews each input variable up to 1,000 characters: a layer is seen whole
TOP = 8
PROPERTY_TYPES = (OWL.ObjectProperty, OWL.DatatypeProperty, OWL.AnnotationProperty, RDF.Property)
CHARACTERISTICS = {OWL.FunctionalProperty: "functional", OWL.InverseFunctionalProperty: "inverse functional",
                   OWL.TransitiveProperty: "transitive", OWL.SymmetricProperty: "symmetric"}
CARDINALITIES = {OWL.cardinality: "exactly", OWL.qualifiedCardinality: "exactly", OWL.minCardinality: "at least",
                 OWL.minQualifiedCardinality: "at least", OWL.maxCardinality: "at most",
                 OWL.maxQualifiedCardinality: "at most"}
RESERVED = (str(RDF), str(RDFS), str(OWL), "http://www.w3.org/2001/XMLSchema#")


@dataclass(frozen=True)
class Layer:
    """One packed layer.

    Args:
        name: L0, L1 or L3.
        text: the layer as the model sees it (at most `bound` characters).
        bound: the character bound it was packed to.
        dropped: lines left out to stay within the bound.
    """

    name: str
    text: str
    bound: int
    dropped: int = 0

    def brief(self) -> LayerBrief:
        """What a trajectory records of the layer: its name, length, bound and dropped lines (not its text)."""
        return LayerBrief(self.name, len(self.text), self.bound, self.dropped)


def build(layers: str | Iterable[str] | None, graph: Graph | None = None, memory: Memory | None = None,
          guide: str | Path | None = None, bounds: dict[str, int] | None = None,
          endpoints: tuple[str, ...] = ()) -> list[Layer]:
    """Pack the requested layers; ConfigError when a layer has nothing to be computed from. Without an ontology, L0
    is the card of the run's endpoints (what memory's EndpointProfiles know of each)."""
    names, bounds = parse_layers(layers), {**BOUNDS, **(bounds or {})}
    if any(not 0 < int(bounds[n]) <= MAX_BOUND for n in names):
        raise ConfigError(f"layer bounds must be between 1 and {MAX_BOUND} characters (the RLM's preview size)")
    if graph is None and ("L1" in names or ("L0" in names and not endpoints)):
        raise ConfigError("layers L0 and L1 are computed from the ontology: pass ontology=PATH (or --ontology); "
                          "L0 also from the run's endpoints (--endpoint URL)")
    return [_layer(n, int(bounds[n]), graph, memory, guide, endpoints) for n in names]


def _layer(name: str, bound: int, graph: Graph | None, memory: Memory | None, guide: str | Path | None,
           endpoints: tuple[str, ...]) -> Layer:
    """One layer packed to `bound` (build has checked that it can be computed)."""
    if name == "L3":
        return guide_summary(_guide_text(guide), bound)
    if graph is None:
        return endpoint_card(endpoints, memory, bound)
    return sense_card(graph, bound) if name == "L0" else schema_card(graph, memory, bound)


def inputs(layers: list[Layer]) -> dict[str, str]:
    """The layers as RLM input variables: {ontology_card: ..., schema_constraints: ..., guide_summary: ...}."""
    return {FIELDS[layer.name]: layer.text for layer in layers}


def sense_card(graph: Graph, bound: int = BOUNDS["L0"]) -> Layer:
    """L0: the ontology's IRI, title, size, namespaces in use, top classes and properties by use."""
    classes, props = _classes(graph), _properties(graph)
    lines = [f"Ontology sense card (L0): {_header(graph)}",
             f"Size: {len(graph)} triples, {len(classes)} classes, {len(props)} properties, "
             f"{len(_individuals(graph, classes))} individuals",
             _joined("Namespaces", _namespaces(graph)),
             _joined("Top classes", [_qname(graph, c) for c in _top(graph, classes)]),
             _joined("Top properties", [_qname(graph, p) for p in _top(graph, props)]),
             f"Labels: {_label_property(graph)}"]
    return _pack("L0", [line for line in lines if line], bound)


def endpoint_card(urls: tuple[str, ...], memory: Memory | None = None, bound: int = BOUNDS["L0"]) -> Layer:
    """L0 of a run on endpoints: each endpoint with what memory's profile of it knows (graphs, features, quirks,
    limits), or that nothing is known yet and how to discover it."""
    lines = ["Endpoint card (L0): the SPARQL endpoints this run may query"]
    for url in urls:
        found = find_profile(memory, url)
        lines.append(f"- {summary(found[1])}" if found else
                     f"- {url}: nothing known yet; discover it with endpoint_describe and endpoint_graphs")
    return _pack("L0", lines, bound)


def schema_card(graph: Graph, memory: Memory | None = None, bound: int = BOUNDS["L1"]) -> Layer:
    """L1: anti-patterns first, then disjointness, property characteristics, cardinalities, shapes, domain/range."""
    disjoint, traits, cards = _disjoint(graph), _characteristics(graph), _cardinalities(graph)
    anti = [f"- [memory] {title}" for title in _memory_antipatterns(graph, memory)]
    anti += [f"- do not type one node as both {a} and {b} (disjoint)" for a, b in disjoint]
    anti += [f"- {p} is functional: at most one value per subject" for p, t in traits if t == "functional"]
    lines = ["Schema constraints (L1):", *(["Anti-patterns:", *anti] if anti else []),
             _joined("Property characteristics", [f"{p} {t}" for p, t in traits], sep="; "),
             *(["Restrictions:", *(f"- {c}: {rule}" for c, rule in cards)] if cards else []),
             *(["Shapes:", *(f"- {line}" for line in _shapes(graph))] if _shapes(graph) else []),
             _joined("Domain -> range", [_signature(graph, p) for p in _top(graph, _properties(graph), 12)],
                     sep="; ", width=400)]
    return _pack("L1", [line for line in lines if line], bound)


def guide_summary(text: str, bound: int = BOUNDS["L3"]) -> Layer:
    """L3: the guide's headings and the first sentence of each paragraph, in order, within the bound."""
    lines = ["Guide summary (L3):"]
    for block in re.split(r"\n\s*\n", text.strip()):
        block = " ".join(block.split())
        if block.startswith("#"):
            lines.append(block.lstrip("# ").strip() + ":")
        elif block:
            lines.append("- " + re.split(r"(?<=[.!?])\s", block, maxsplit=1)[0])
    return _pack("L3", lines, bound)


def _joined(label: str, items: list[str], sep: str = ", ", width: int = 160) -> str:
    """"label: a, b, c (+N more)" with as many items as fit in `width` characters; "" when there are none."""
    if not items:
        return ""
    line = f"{label}: {items[0]}"
    for i, item in enumerate(items[1:], 1):
        if len(line) + len(sep) + len(item) + len(f" (+{len(items) - i} more)") > width:
            return line + f" (+{len(items) - i} more)"
        line += sep + item
    return line


def _guide_text(guide: str | Path | None) -> str:
    """The guide's text from a path or a string; ConfigError when L3 has no guide."""
    if guide is None or not str(guide).strip():
        raise ConfigError("layer L3 summarizes a guide: pass guide=PATH (a Markdown or text file) or the guide text")
    path = Path(str(guide)) if len(str(guide)) < 4096 and "\n" not in str(guide) else None
    if path is not None and path.is_file():
        return path.read_text(encoding="utf-8")
    if path is not None and path.suffix.lower() in (".md", ".txt", ".markdown"):
        raise ConfigError(f"guide file {guide} does not exist; check the path")
    return str(guide)


def _pack(name: str, lines: list[str], bound: int) -> Layer:
    """Whole lines in order while they fit in `bound` characters (a line alone longer than the bound is cut)."""
    kept: list[str] = []
    size = -1
    for line in lines:
        if size + 1 + len(line) > bound:
            if not kept:
                kept, size = [line[:max(bound - 1, 0)] + "…"], bound
            continue
        kept.append(line)
        size += 1 + len(line)
    return Layer(name, "\n".join(kept)[:bound], bound, len(lines) - len(kept))


def _header(graph: Graph) -> str:
    """The ontology IRI, its version IRI and a short title (or 'no owl:Ontology header')."""
    onto = sorted(graph.subjects(RDF.type, OWL.Ontology), key=str)
    if not onto:
        return "no owl:Ontology header"
    title = next((graph.value(onto[0], p) for p in (DCTERMS.title, DC.title, RDFS.label)
                  if graph.value(onto[0], p) is not None), None)
    version = graph.value(onto[0], OWL.versionIRI)
    parts = [f"<{onto[0]}>"] + ([f"version <{version}>"] if version else []) + \
        ([f'"{_clip(str(title), 80)}"'] if title else [])
    return " ".join(parts)


def _classes(graph: Graph) -> list[URIRef]:
    """Named classes declared (owl:Class / rdfs:Class) or used in rdfs:subClassOf, sorted."""
    found = {c for t in (OWL.Class, RDFS.Class) for c in graph.subjects(RDF.type, t)}
    found |= {n for s, o in graph.subject_objects(RDFS.subClassOf) for n in (s, o)}
    return sorted((c for c in found if isinstance(c, URIRef) and not str(c).startswith(RESERVED)), key=str)


def _properties(graph: Graph) -> list[URIRef]:
    """Named properties declared with an OWL/RDF property type, sorted."""
    found = {p for t in PROPERTY_TYPES for p in graph.subjects(RDF.type, t)}
    return sorted((p for p in found if isinstance(p, URIRef) and not str(p).startswith(RESERVED)), key=str)


def _individuals(graph: Graph, classes: list[URIRef]) -> set[URIRef]:
    """Subjects typed with one of the ontology's classes (or owl:NamedIndividual)."""
    wanted = set(classes) | {OWL.NamedIndividual}
    return {s for s, o in graph.subject_objects(RDF.type) if o in wanted and isinstance(s, URIRef)}


def _top(graph: Graph, terms: list[URIRef], n: int = TOP) -> list[URIRef]:
    """The n terms mentioned in the most triples (as subject, predicate or object), ties by IRI."""
    uses = Counter({t: len(list(graph.triples((None, None, t)))) + len(list(graph.triples((None, t, None))))
                    for t in terms})
    return sorted(terms, key=lambda t: (-uses[t], str(t)))[:n]


def _namespaces(graph: Graph, n: int = 6) -> list[str]:
    """The namespaces most used by named subjects (prefix=IRI when bound), standard vocabularies left out."""
    uses = Counter(_namespace(str(s)) for s in graph.subjects() if isinstance(s, URIRef))
    bound = {str(ns): p for p, ns in graph.namespaces()}
    top = sorted((ns for ns in uses if ns and not ns.startswith(RESERVED)), key=lambda ns: (-uses[ns], ns))[:n]
    return [f"{bound[ns]}: <{ns}>" if bound.get(ns) else f"<{ns}>" for ns in top] or ["none"]


def _namespace(iri: str) -> str:
    """The IRI up to and including its last '#' or '/'."""
    cut = max(iri.rfind("#"), iri.rfind("/"))
    return iri[:cut + 1] if cut > 0 else ""


def _qname(graph: Graph, term: Node | None) -> str:
    """prefix:local when the namespace is bound, else the local name."""
    if isinstance(term, BNode):
        return "(anonymous)"
    try:
        prefix, _, local = graph.namespace_manager.compute_qname(str(term), generate=False)
        return f"{prefix}:{local}" if prefix else local
    except (KeyError, ValueError):
        return local_name(str(term))


def _signature(graph: Graph, prop: URIRef) -> str:
    """prop (domain -> range), the parts that are declared."""
    dom, rng = graph.value(prop, RDFS.domain), graph.value(prop, RDFS.range)
    sig = f" ({_qname(graph, dom) if dom else '?'} -> {_qname(graph, rng) if rng else '?'})" if dom or rng else ""
    return _qname(graph, prop) + sig


def _label_property(graph: Graph) -> str:
    """Which label property the ontology mostly uses."""
    counts = {"skos:prefLabel": len(set(graph.subjects(SKOS.prefLabel))),
              "rdfs:label": len(set(graph.subjects(RDFS.label)))}
    best = max(sorted(counts), key=lambda k: counts[k])
    return f"use {best} ({counts[best]} terms labelled)" if counts[best] else "no labels"


def _disjoint(graph: Graph) -> list[tuple[str, str]]:
    """Disjoint named class pairs (owl:disjointWith and owl:AllDisjointClasses), sorted."""
    pairs = {(a, b) for a, b in graph.subject_objects(OWL.disjointWith)}
    for node in graph.subjects(RDF.type, OWL.AllDisjointClasses):
        members = _list(graph, graph.value(node, OWL.members))
        pairs |= {(a, b) for i, a in enumerate(members) for b in members[i + 1:]}
    named = {_pair(_qname(graph, a), _qname(graph, b)) for a, b in pairs
             if isinstance(a, URIRef) and isinstance(b, URIRef)}
    return sorted(named)


def _pair(a: str, b: str) -> tuple[str, str]:
    """Two names in sorted order."""
    return (a, b) if a <= b else (b, a)


def _list(graph: Graph, head: Node | None) -> list[Node]:
    """The members of an RDF list (empty when there is none)."""
    return list(Collection(graph, head)) if head is not None else []


def _characteristics(graph: Graph) -> list[tuple[str, str]]:
    """(property, characteristic) for functional, inverse functional, transitive and symmetric properties."""
    found = [(_qname(graph, p), name) for t, name in CHARACTERISTICS.items() for p in graph.subjects(RDF.type, t)
             if isinstance(p, URIRef)]
    return sorted(found)


def _cardinalities(graph: Graph) -> list[tuple[str, str]]:
    """(class, "exactly 1 prop") from OWL restrictions the class is a subclass of, plus some/all-values-from."""
    out = []
    for cls, restriction in graph.subject_objects(RDFS.subClassOf):
        prop = graph.value(restriction, OWL.onProperty)
        if not isinstance(cls, URIRef) or prop is None:
            continue
        for p, word in CARDINALITIES.items():
            if (n := graph.value(restriction, p)) is not None:
                out.append((_qname(graph, cls), f"{word} {n} {_qname(graph, prop)}"))
        for p, word in ((OWL.someValuesFrom, "some"), (OWL.allValuesFrom, "only")):
            if isinstance(target := graph.value(restriction, p), URIRef):
                out.append((_qname(graph, cls), f"{_qname(graph, prop)} {word} {_qname(graph, target)}"))
    return sorted(out)


def _shapes(graph: Graph) -> list[str]:
    """SHACL property shapes in the graph, one line per (target class, path): "Class: path min 1 max 1 xsd:date"."""
    merged: dict[tuple[str, str], list[str]] = {}
    for shape, target in graph.subject_objects(SH.targetClass):
        for prop in graph.objects(shape, SH.property):
            path = graph.value(prop, SH.path)
            if isinstance(path, URIRef):
                parts = merged.setdefault((_qname(graph, target), _qname(graph, path)), [])
                parts += [p for p in _shape_parts(graph, prop) if p not in parts]
    return [f"{target}: {path} {' '.join(sorted(parts))}".rstrip() for (target, path), parts in sorted(merged.items())]


def _shape_parts(graph: Graph, prop: Node) -> list[str]:
    """The min/max counts and datatype/class of one property shape."""
    parts = [f"{w} {graph.value(prop, p)}" for p, w in ((SH.minCount, "min"), (SH.maxCount, "max"))
             if isinstance(graph.value(prop, p), Literal)]
    return parts + [_qname(graph, graph.value(prop, p)) for p in (SH.datatype, SH["class"])
                    if isinstance(graph.value(prop, p), URIRef)]


def _memory_antipatterns(graph: Graph, memory: Memory | None, k: int = 3) -> list[str]:
    """Titles of the memory's AntiPattern items for this ontology, then for the versions and aligned terms it
    declares (store/alignment.py; those marked carried over); none without a memory."""
    from ..store import ontology_context

    context = ontology_context(graph)
    if memory is None or context is None:
        return []
    return [_clip(h.title, 120) + (" (carried over)" if h.carried_over_from else "")
            for h in memory.search(kinds=["AntiPattern"], k=k, context=context)]


def _clip(text: str, n: int) -> str:
    """text on one line, at most n characters."""
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n - 1] + "…"
