"""Memory items as RDF: the triples an `ItemSpec` adds, and the IRIs of task types, failure modes, runs and sources."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from urllib.parse import quote, unquote

from rdflib import Graph, Literal, URIRef
from rdflib.namespace import RDF, XSD

from ..errors import InvalidItem, UnknownItem
from ..model import Card, Item, ItemSpec, UseCounts, sha256
from ..model.operators import operator_from_json, stored_json
from ..vocab import BLOB, FAILURE_MODE, ITEM, KINDS, OM, PROV, RUN, TASK_TYPE
from .sparql_terms import integer

IRI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\"{}|\\^`]+$")
ID = re.compile(r"^[0-9a-f]{16}$")
COUNTERS = {"use_count": OM.useCount, "success_count": OM.successCount, "failure_count": OM.failureCount}


def item_graph(spec: ItemSpec, created_at: datetime | None = None) -> Graph:
    """Every triple the item adds: its own fields, its links and provenance, and hasException on the rule it refines
    (in rdflib's context-free store: an item's graph is built, checked and written, never a named graph; ~30% faster
    to build than in the default store)."""
    s, g = ITEM[spec.id], Graph(store="SimpleMemory", bind_namespaces="none")
    g.add((s, RDF.type, OM[spec.kind]))
    for prop, value in ((OM.title, spec.title), (OM.summary, spec.summary), (OM.scope, spec.scope)):
        g.add((s, prop, Literal(value)))
    g.add((s, OM.confidence, Literal(spec.confidence, datatype=XSD.double)))
    g.add((s, OM.priority, Literal(spec.priority, datatype=XSD.integer)))
    sha = sha256(spec.content)
    g.add((s, OM.contentRef, Literal(f"sha256:{sha}")))
    g.add((s, OM.contentHash, Literal(sha)))
    when = (created_at or datetime.now(timezone.utc)).replace(microsecond=0)
    g.add((s, OM.createdAt, Literal(when, datatype=XSD.dateTime)))
    for c in COUNTERS.values():
        g.add((s, c, Literal(0, datatype=XSD.nonNegativeInteger)))
    for t in spec.tags:
        g.add((s, OM.tag, Literal(t)))
    _applicability(g, s, spec)
    _compiled(g, s, spec)
    _links(g, s, spec)
    return g


def _applicability(g: Graph, s: URIRef, spec: ItemSpec) -> None:
    """Ontology, about-term, task-type and failure-mode links (the nodes typed, so sh:class holds)."""
    for iri in spec.applies_to:
        if not IRI.match(iri):
            raise InvalidItem(f"applies_to needs ontology IRIs such as http://www.w3.org/ns/prov#, got {iri[:80]!r}")
        g.add((s, OM.appliesToOntology, URIRef(iri)))
        g.add((URIRef(iri), RDF.type, OM.TargetOntology))
    for prop, terms in ((OM.aboutClass, spec.about_classes), (OM.aboutProperty, spec.about_properties)):
        for iri in terms:
            if not IRI.match(iri):
                raise InvalidItem(f"about terms are IRIs of ontology classes and properties, got {iri[:80]!r}")
            g.add((s, prop, URIRef(iri)))
    for prop, cls, node in ((OM.appliesToTaskType, OM.TaskType, task_type_iri),
                            (OM.preventsFailureMode, OM.FailureMode, failure_mode_iri)):
        for v in spec.task_types if prop == OM.appliesToTaskType else spec.failure_modes:
            g.add((s, prop, node(v)))
            g.add((node(v), RDF.type, cls))


def _compiled(g: Graph, s: URIRef, spec: ItemSpec) -> None:
    """Signature, action schema (canonical JSON) and verification hook, when given."""
    for prop, value in ((OM.violationSignature, spec.signature), (OM.verificationHook, spec.verification_hook),
                        (OM.actionSchema, stored_json(spec.action_schema))):
        if value is not None:
            g.add((s, prop, Literal(str(value))))


def _links(g: Graph, s: URIRef, spec: ItemSpec) -> None:
    """refines / hasException, groundedByEpisode and PROV-O provenance triples."""
    for other in (spec.refines, *spec.grounded_by):
        if other is not None and not ID.match(str(other)):
            raise InvalidItem(f"linked item ids are 16 hex characters, got {str(other)[:40]!r}")
    if spec.refines is not None:
        g.add((s, OM.refines, ITEM[spec.refines]))
        if spec.scope == "exception":
            g.add((ITEM[spec.refines], OM.hasException, s))
    for e in spec.grounded_by:
        g.add((s, OM.groundedByEpisode, ITEM[e]))
    prov = spec.provenance or {}
    if prov.get("run"):
        run = run_iri(prov["run"])
        g.add((s, PROV.wasGeneratedBy, run))
        g.add((run, RDF.type, OM.Run))
    if prov.get("derived_from"):
        src = source_iri(str(prov["derived_from"]))
        g.add((s, PROV.wasDerivedFrom, src))
        g.add((s, OM.derivedFromTrace, src))
        g.add((src, RDF.type, OM.Trajectory))


def stored_item(card: Card, g: Graph, size_of: Callable[[str], int]) -> Item:
    """An item as `Memory.get` gives it: its card and the stored triples `g` of its node (`size_of`: a content
    ref's size in characters)."""
    s = ITEM[card.id]
    one = {p: o for p, o in g.predicate_objects(s)}

    def objs(p: URIRef) -> tuple[str, ...]:
        return tuple(sorted(str(o) for o in g.objects(s, p)))

    schema = one.get(OM.actionSchema)
    return Item(
        **card.card(), scope=str(one[OM.scope]),
        task_types=tuple(_slug(t) for t in objs(OM.appliesToTaskType)),
        failure_modes=tuple(_slug(t) for t in objs(OM.preventsFailureMode)), tags=objs(OM.tag),
        refines=_ids(objs(OM.refines)), supersedes=_ids(objs(OM.supersedes)),
        exceptions=_ids(objs(OM.hasException)), grounded_by=_ids(objs(OM.groundedByEpisode)),
        content_ref=str(one[OM.contentRef]), content_hash=str(one[OM.contentHash]),
        size=size_of(str(one[OM.contentRef])), created_at=str(one.get(OM.createdAt, "")),
        counts=UseCounts(**{k: integer(one.get(p)) for k, p in COUNTERS.items()}),
        signature=_text(one.get(OM.violationSignature)),
        action_schema=operator_from_json(str(schema)) if schema is not None else None,
        verification_hook=_text(one.get(OM.verificationHook)),
        runs=objs(PROV.wasGeneratedBy), derived_from=objs(PROV.wasDerivedFrom),
        archived=isinstance(flag := one.get(OM.archived), Literal) and bool(flag.toPython()))


def _text(value: object) -> str | None:
    """The text of an optional literal."""
    return None if value is None else str(value)


def _slug(iri: str) -> str:
    """The slug at the end of a task-type or failure-mode IRI."""
    return unquote(iri.rsplit("/", 1)[-1])


def _ids(iris: tuple[str, ...]) -> tuple[str, ...]:
    """Item ids of item IRIs."""
    return tuple(i[len(str(ITEM)):] for i in iris if i.startswith(str(ITEM)))


def kind_of(id: str, types: Iterable[str]) -> str:
    """A stored item's kind, from the IRIs of its rdf:types (the first kind, sorted); UnknownItem when none is a
    kind (no item has that id)."""
    kinds = sorted(k for k in (t.rsplit("#", 1)[-1] for t in types) if k in KINDS)
    if not kinds:
        raise unknown_item(id)
    return kinds[0]


def unknown_item(id: object) -> UnknownItem:
    """The error for an id that names no stored item."""
    return UnknownItem(f"no memory item {str(id)[:40]!r}; ids are 16 hex characters, find them with search")


def linked_ids(spec: ItemSpec) -> list[str]:
    """Ids of the stored items an item links to (they must exist)."""
    return ([spec.refines] if spec.refines is not None else []) + list(spec.grounded_by)


def task_type_iri(name: str) -> URIRef:
    """The IRI of a task type name (case-folded slug)."""
    return TASK_TYPE[slugify(name)]


def failure_mode_iri(name: str) -> URIRef:
    """The IRI of a failure mode name (case-folded slug)."""
    return FAILURE_MODE[slugify(name)]


def run_iri(run: str) -> URIRef:
    """The IRI of a run id."""
    return RUN[quote(str(run), safe="")]


def source_iri(ref: str) -> URIRef:
    """The IRI a provenance source names: a blob key becomes a blob IRI, an IRI stays as it is."""
    if ref.startswith("sha256:"):
        return BLOB[ref.removeprefix("sha256:")]
    if IRI.match(ref):
        return URIRef(ref)
    raise InvalidItem(f"provenance derived_from must be a blob key (sha256:...) or an IRI, got {ref[:80]!r}")


def slugify(text: str) -> str:
    """An IRI-safe slug of a task type or failure mode name (case-folded, spaces as dashes)."""
    return quote("-".join(str(text).strip().casefold().split()), safe="-._~")
