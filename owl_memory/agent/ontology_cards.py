"""The lines of the two ontology layers, read off the ontology's own triples; agent/context.py packs them to their
bounds.

L0, the sense card (Widoco-style): header, description, preferred prefix, size, formalism, imports and VoID subsets,
the label and description properties in use, namespaces, top classes and properties. L1, the schema card:
anti-patterns (memory's, disjointness, functional properties), SPARQL hints derived from the axioms present
(transitive, symmetric, inverse, subproperties, property chains, the class hierarchy), the property split (object,
datatype, annotation), restrictions, shapes, domain -> range (rdfs: and schema.org's domainIncludes /
rangeIncludes) and named individuals by class. A field the ontology does not state says "none": nothing is invented.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from rdflib import BNode, Graph, Literal, Namespace, URIRef
from rdflib.collection import Collection
from rdflib.namespace import DC, DCTERMS, SKOS
from rdflib.term import Node

from ..vocab import OWL, RDF, RDFS, SH, local_name
from .tools.ontology import CLASS_TYPES, PROPERTY_TYPES

if TYPE_CHECKING:
    from ..store import Memory

VANN = Namespace("http://purl.org/vocab/vann/")
VOID = Namespace("http://rdfs.org/ns/void#")
SCHEMAS = (Namespace("http://schema.org/"), Namespace("https://schema.org/"))
TOP = 8
EACH = 3  # SPARQL hints of one kind
KINDS = {kind: t for t, kind in PROPERTY_TYPES.items() if kind != "rdf"}  # the OWL property split
CHARACTERISTICS = {OWL.FunctionalProperty: "functional", OWL.InverseFunctionalProperty: "inverse functional",
                   OWL.TransitiveProperty: "transitive", OWL.SymmetricProperty: "symmetric"}
CARDINALITIES = {OWL.cardinality: "exactly", OWL.qualifiedCardinality: "exactly", OWL.minCardinality: "at least",
                 OWL.minQualifiedCardinality: "at least", OWL.maxCardinality: "at most",
                 OWL.maxQualifiedCardinality: "at most"}
RESERVED = (str(RDF), str(RDFS), str(OWL), "http://www.w3.org/2001/XMLSchema#")
LABELS = {"skos:prefLabel": SKOS.prefLabel, "rdfs:label": RDFS.label, "dcterms:title": DCTERMS.title}
DESCRIPTIONS = {"skos:definition": SKOS.definition, "rdfs:comment": RDFS.comment,
                "dcterms:description": DCTERMS.description}
FORMALISMS = (("OWL", ((RDF.type, OWL.Ontology), (RDF.type, OWL.Class), (RDF.type, OWL.ObjectProperty),
                       (RDF.type, OWL.DatatypeProperty), (RDF.type, OWL.Restriction))),
              ("RDFS", ((RDF.type, RDFS.Class), (RDF.type, RDF.Property), (RDFS.subClassOf, None))),
              ("SKOS", ((RDF.type, SKOS.ConceptScheme), (RDF.type, SKOS.Concept))),
              ("SHACL", ((RDF.type, SH.NodeShape), (RDF.type, SH.PropertyShape))))


def sense_lines(graph: Graph) -> list[str]:
    """L0's lines, most useful first (packing drops whole lines from the end of what does not fit)."""
    classes, props = classes_of(graph), properties_of(graph)
    onto = _ontology(graph)
    split = ", ".join(f"{len(_of_kind(graph, t))} {k}" for k, t in KINDS.items())
    description = _description(graph, onto)
    imports = [f"<{i}>" for i in _objects(graph, onto, OWL.imports)]
    subsets = [_qname(graph, s) for s in _objects(graph, onto, VOID.subset)]
    return [f"Ontology sense card (L0): {_header(graph, onto)}",
            f"Description: {_clip(str(description), 100) if description is not None else 'none'}",
            f"Size: {len(graph)} triples, {len(classes)} classes, {len(props)} properties ({split}), "
            f"{len(individuals_of(graph, classes))} individuals",
            f"Formalism: {', '.join(_formalisms(graph)) or 'none stated'}; labels: {_in_use(graph, LABELS)}; "
            f"descriptions: {_in_use(graph, DESCRIPTIONS)}",
            f"Preferred prefix: {_preferred(graph, onto)}; {_joined('imports', imports, width=100) or 'imports: none'}"
            f"; {_joined('VoID subsets', subsets, width=60) or 'VoID subsets: none'}",
            _joined("Top classes", [_qname(graph, c) for c in _top(graph, classes)]),
            _joined("Top properties", [_qname(graph, p) for p in _top(graph, props)]),
            _joined("Namespaces", _namespaces(graph, 4))]


def schema_lines(graph: Graph, memory: Memory | None = None) -> list[str]:
    """L1's lines: anti-patterns, SPARQL hints, the property split, restrictions, shapes, signatures, individuals."""
    traits, cards, shapes = _characteristics(graph), _cardinalities(graph), _shapes(graph)
    anti = [f"- [memory] {title}" for title in _memory_antipatterns(graph, memory)]
    disjoint = _disjoint(graph)
    anti += [f"- do not type one node as both {a} and {b} (disjoint)" for a, b in disjoint[:EACH]]
    anti += [f"- (+{len(disjoint) - EACH} more disjoint pairs)"] if len(disjoint) > EACH else []
    functional = [p for p, t in traits if t == "functional"]
    anti += [f"- {p} is functional: at most one value per subject" for p in functional[:EACH]]
    anti += [f"- (+{len(functional) - EACH} more functional properties)"] if len(functional) > EACH else []
    hints = sparql_hints(graph)
    split = [_joined(f"{kind.capitalize()} properties", [_qname(graph, p) for p in _top(graph, _of_kind(graph, t))])
             for kind, t in KINDS.items()]
    lines = ["Schema constraints (L1):", *(["Anti-patterns:", *anti] if anti else []),
             *(["SPARQL hints:", *hints] if hints else []), *split,
             _joined("Property characteristics", [f"{p} {t}" for p, t in traits], sep="; "),
             *(["Restrictions:", *(f"- {c}: {rule}" for c, rule in cards)] if cards else []),
             *(["Shapes:", *(f"- {line}" for line in shapes)] if shapes else []),
             _joined("Domain -> range", [_signature(graph, p) for p in _top(graph, properties_of(graph), 12)],
                     sep="; ", width=400),
             _joined("Individuals by class", _individuals_by_class(graph), sep="; ", width=300)]
    return [line for line in lines if line]


def sparql_hints(graph: Graph) -> list[str]:
    """Query advice that follows from axioms the ontology states (none when it states none of them)."""
    q = lambda term: _qname(graph, term)  # noqa: E731 - a short local alias
    named = lambda terms: sorted((t for t in terms if isinstance(t, URIRef)), key=str)  # noqa: E731
    hints = ["- rdfs:subClassOf+ for indirect superclasses, rdf:type/rdfs:subClassOf* for instances of subclasses "
             "(a deep class hierarchy)"] if _deep_hierarchy(graph) else []
    hints += [f"- {q(p)}+ follows the transitive {q(p)} through every step"
              for p in named(graph.subjects(RDF.type, OWL.TransitiveProperty))][:EACH]
    hints += [f"- ({q(p)}|^{q(p)}) for the symmetric {q(p)}"
              for p in named(graph.subjects(RDF.type, OWL.SymmetricProperty))][:EACH]
    hints += [f"- ({q(a)}|^{q(b)}): {q(a)} is the inverse of {q(b)}"
              for a, b in sorted(graph.subject_objects(OWL.inverseOf), key=str)
              if isinstance(a, URIRef) and isinstance(b, URIRef) and a != b][:EACH]
    hints += [f"- ({q(sup)}|{q(sub)}): {q(sub)} is a subproperty of {q(sup)} (no inference here)"
              for sub, sup in sorted(graph.subject_objects(RDFS.subPropertyOf), key=str)
              if isinstance(sub, URIRef) and isinstance(sup, URIRef) and not str(sup).startswith(RESERVED)][:EACH]
    for prop, head in sorted(graph.subject_objects(OWL.propertyChainAxiom), key=str):
        chain = [q(step) for step in _list(graph, head)]
        if isinstance(prop, URIRef) and chain:
            hints.append(f"- {'/'.join(chain)} for {q(prop)} (its property chain)")
    return hints[:3 * EACH]


def classes_of(graph: Graph) -> list[URIRef]:
    """Named classes declared (owl:Class / rdfs:Class) or used in rdfs:subClassOf, sorted."""
    found = {c for t in CLASS_TYPES for c in graph.subjects(RDF.type, t)}
    found |= {n for s, o in graph.subject_objects(RDFS.subClassOf) for n in (s, o)}
    return sorted((c for c in found if isinstance(c, URIRef) and not str(c).startswith(RESERVED)), key=str)


def properties_of(graph: Graph) -> list[URIRef]:
    """Named properties declared with an OWL/RDF property type, sorted."""
    found = {p for t in PROPERTY_TYPES for p in graph.subjects(RDF.type, t)}
    return sorted((p for p in found if isinstance(p, URIRef) and not str(p).startswith(RESERVED)), key=str)


def individuals_of(graph: Graph, classes: list[URIRef]) -> set[URIRef]:
    """Subjects typed with one of the ontology's classes (or owl:NamedIndividual)."""
    wanted = set(classes) | {OWL.NamedIndividual}
    return {s for s, o in graph.subject_objects(RDF.type) if o in wanted and isinstance(s, URIRef)}


def _of_kind(graph: Graph, kind: URIRef) -> list[URIRef]:
    """Named properties declared of one OWL property type, sorted."""
    return sorted((p for p in graph.subjects(RDF.type, kind) if isinstance(p, URIRef)), key=str)


def _ontology(graph: Graph) -> URIRef | None:
    """The graph's owl:Ontology header that says the most about itself (ties by IRI); None without one. A bundle such
    as PROV-O declares several."""
    headers = [o for o in graph.subjects(RDF.type, OWL.Ontology) if isinstance(o, URIRef)]
    return min(headers, key=lambda o: (-len(list(graph.predicate_objects(o))), str(o)), default=None)


def _objects(graph: Graph, subject: URIRef | None, predicate: URIRef) -> list[Node]:
    """The objects of one property of the ontology header, sorted (none without a header)."""
    return sorted(graph.objects(subject, predicate), key=str) if subject is not None else []


def _header(graph: Graph, onto: URIRef | None) -> str:
    """The ontology IRI, its version IRI and a short title (or 'no owl:Ontology header')."""
    if onto is None:
        return "no owl:Ontology header"
    title = next((graph.value(onto, p) for p in (DCTERMS.title, DC.title, RDFS.label)
                  if graph.value(onto, p) is not None), None)
    version = graph.value(onto, OWL.versionIRI)
    parts = [f"<{onto}>"] + ([f"version <{version}>"] if version else []) + \
        ([f'"{_clip(str(title), 80)}"'] if title else [])
    return " ".join(parts)


def _description(graph: Graph, onto: URIRef | None) -> Node | None:
    """The ontology's description (dcterms:, dc:, rdfs:comment, skos:definition, in that order)."""
    props = (DCTERMS.description, DC.description, RDFS.comment, SKOS.definition)
    return next((d for p in props if (d := graph.value(onto, p)) is not None), None) if onto is not None else None


def _preferred(graph: Graph, onto: URIRef | None) -> str:
    """VANN's preferred prefix and namespace ("prov: <http://...#>"), whichever the header states, or "none"."""
    prefix = graph.value(onto, VANN.preferredNamespacePrefix) if onto is not None else None
    space = graph.value(onto, VANN.preferredNamespaceUri) if onto is not None else None
    parts = ([f"{prefix}:"] if prefix else []) + ([f"<{space}>"] if space else [])
    return " ".join(parts) or "none"


def _formalisms(graph: Graph) -> list[str]:
    """Which of OWL, RDFS, SKOS and SHACL the graph's own statements use."""
    return [name for name, marks in FORMALISMS if any(next(graph.triples((None, p, o)), None) for p, o in marks)]


def _in_use(graph: Graph, props: dict[str, URIRef]) -> str:
    """The property of `props` the most terms use, with how many ("none" when none does)."""
    counts = {name: len(set(graph.subjects(p))) for name, p in props.items()}
    best = max(counts, key=lambda k: (counts[k], k == next(iter(props))))
    n = counts[best]
    return f"{best} ({n} {'term' if n == 1 else 'terms'})" if n else "none"


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
    """prop (domain -> range), from rdfs:domain / rdfs:range or schema.org's domainIncludes / rangeIncludes."""
    dom = [d for d in graph.objects(prop, RDFS.domain)] or _includes(graph, prop, "domainIncludes")
    rng = [r for r in graph.objects(prop, RDFS.range)] or _includes(graph, prop, "rangeIncludes")
    shown = lambda terms: "|".join(_qname(graph, t) for t in terms[:3]) or "?"  # noqa: E731 - a short local alias
    return _qname(graph, prop) + (f" ({shown(dom)} -> {shown(rng)})" if dom or rng else "")


def _includes(graph: Graph, prop: URIRef, name: str) -> list[Node]:
    """schema.org's domainIncludes / rangeIncludes of a property (http: or https:), sorted."""
    return sorted({o for s in SCHEMAS for o in graph.objects(prop, s[name])}, key=str)


def _individuals_by_class(graph: Graph, classes: int = 4, each: int = 4) -> list[str]:
    """"Class: a, b (+N more)" for the classes with the most named individuals (enumeration-like values)."""
    members: dict[URIRef, list[URIRef]] = {}
    for individual in individuals_of(graph, classes_of(graph)):
        for cls in graph.objects(individual, RDF.type):
            if isinstance(cls, URIRef) and cls != OWL.NamedIndividual and not str(cls).startswith(RESERVED):
                members.setdefault(cls, []).append(individual)
    ranked = sorted(members, key=lambda c: (-len(members[c]), str(c)))[:classes]
    return [f"{_qname(graph, c)}: " + ", ".join(_qname(graph, i) for i in sorted(members[c], key=str)[:each])
            + (f" (+{len(members[c]) - each} more)" if len(members[c]) > each else "") for c in ranked]


def _deep_hierarchy(graph: Graph) -> bool:
    """Whether some named class has a named superclass that has a named superclass of its own (two levels)."""
    links = [(c, p) for c, p in graph.subject_objects(RDFS.subClassOf)
             if isinstance(c, URIRef) and isinstance(p, URIRef) and not str(p).startswith(RESERVED)]
    children = {c for c, _ in links}
    return any(p in children for _, p in links)


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


def _clip(text: str, n: int) -> str:
    """text on one line, at most n characters."""
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n - 1] + "…"
