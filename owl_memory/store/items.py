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


Row = tuple[str, str, str | int | float, str | None]  # (subject IRI, predicate IRI, object, datatype IRI or None)
# An item's triple as plain values: the object is an IRI when the datatype is None, else a literal's value (str, int or
# float; a dateTime as its lexical form; a plain string has datatype xsd:string). Writes of many items take rows, not
# rdflib terms (a Literal costs ~20 us to build); graph_of turns them into the rdflib triples SHACL checks.
Rows = list[Row]
_T = {name: str(OM[name]) for name in (
    "title", "summary", "scope", "confidence", "priority", "contentRef", "contentHash", "createdAt", "tag",
    "appliesToOntology", "aboutClass", "aboutProperty", "appliesToTaskType", "preventsFailureMode", "TargetOntology",
    "TaskType", "FailureMode", "violationSignature", "verificationHook", "actionSchema", "refines", "hasException",
    "groundedByEpisode", "derivedFromTrace", "Run", "Trajectory")}
_TYPE, _ITEM, _OM, _COUNTERS = str(RDF.type), str(ITEM), str(OM), tuple(str(c) for c in COUNTERS.values())
_STRING, _DOUBLE, _INTEGER, _DATE, _COUNT = (str(t) for t in (XSD.string, XSD.double, XSD.integer, XSD.dateTime,
                                                               XSD.nonNegativeInteger))
_GENERATED, _DERIVED = str(PROV.wasGeneratedBy), str(PROV.wasDerivedFrom)


def item_graph(spec: ItemSpec, created_at: datetime | None = None) -> Graph:
    """Every triple the item adds (item_rows) as an rdflib Graph."""
    return graph_of(item_rows(spec, created_at))


def graph_of(rows: Iterable[Row]) -> Graph:
    """The rdflib triples of rows (in rdflib's context-free store: an item's graph is built, checked and written, never
    a named graph; ~30% faster to build than in the default store)."""
    g = Graph(store="SimpleMemory", bind_namespaces="none")
    for s, p, o, d in rows:
        g.add((URIRef(s), URIRef(p), URIRef(str(o)) if d is None else
               Literal(o) if d == _STRING else Literal(o, datatype=URIRef(d))))
    return g


def rows_of(g: Graph) -> Rows:
    """The rows of an rdflib graph of IRIs and literals (the inverse of graph_of; a language tag is not kept)."""
    out: Rows = []
    for s, p, o in g:
        if isinstance(o, Literal):
            v = o.toPython()
            value = v if isinstance(v, (int, float)) and not isinstance(v, bool) else str(o)
            out.append((str(s), str(p), value, str(o.datatype or XSD.string)))
        else:
            out.append((str(s), str(p), str(o), None))
    return out


def item_rows(spec: ItemSpec, created_at: datetime | None = None) -> Rows:
    """Every triple the item adds: its own fields, its links and provenance, and hasException on the rule it refines."""
    s = _ITEM + spec.id
    sha = sha256(spec.content)
    when = (created_at or datetime.now(timezone.utc)).replace(microsecond=0)
    rows: Rows = [(s, _TYPE, _OM + spec.kind, None), (s, _T["title"], spec.title, _STRING),
                  (s, _T["summary"], spec.summary, _STRING), (s, _T["scope"], spec.scope, _STRING),
                  (s, _T["confidence"], spec.confidence, _DOUBLE), (s, _T["priority"], spec.priority, _INTEGER),
                  (s, _T["contentRef"], f"sha256:{sha}", _STRING), (s, _T["contentHash"], sha, _STRING),
                  (s, _T["createdAt"], when.isoformat(), _DATE)]
    rows += [(s, c, 0, _COUNT) for c in _COUNTERS]
    rows += [(s, _T["tag"], t, _STRING) for t in spec.tags]
    _applicability(rows, s, spec)
    _compiled(rows, s, spec)
    _links(rows, s, spec)
    return list(dict.fromkeys(rows))  # each triple once, as in a graph


def _applicability(rows: Rows, s: str, spec: ItemSpec) -> None:
    """Ontology, about-term, task-type and failure-mode links (the nodes typed, so sh:class holds)."""
    for iri in spec.applies_to:
        if not IRI.match(iri):
            raise InvalidItem(f"applies_to needs ontology IRIs such as http://www.w3.org/ns/prov#, got {iri[:80]!r}")
        rows += [(s, _T["appliesToOntology"], iri, None), (iri, _TYPE, _T["TargetOntology"], None)]
    for prop, terms in (("aboutClass", spec.about_classes), ("aboutProperty", spec.about_properties)):
        for iri in terms:
            if not IRI.match(iri):
                raise InvalidItem(f"about terms are IRIs of ontology classes and properties, got {iri[:80]!r}")
            rows.append((s, _T[prop], iri, None))
    for prop, cls, node, values in (("appliesToTaskType", "TaskType", task_type_iri, spec.task_types),
                                    ("preventsFailureMode", "FailureMode", failure_mode_iri, spec.failure_modes)):
        for v in values:
            o = str(node(v))
            rows += [(s, _T[prop], o, None), (o, _TYPE, _T[cls], None)]


def _compiled(rows: Rows, s: str, spec: ItemSpec) -> None:
    """Signature, action schema (canonical JSON) and verification hook, when given."""
    for prop, value in (("violationSignature", spec.signature), ("verificationHook", spec.verification_hook),
                        ("actionSchema", stored_json(spec.action_schema))):
        if value is not None:
            rows.append((s, _T[prop], str(value), _STRING))


def _links(rows: Rows, s: str, spec: ItemSpec) -> None:
    """refines / hasException, groundedByEpisode and PROV-O provenance triples."""
    for other in (spec.refines, *spec.grounded_by):
        if other is not None and not ID.match(str(other)):
            raise InvalidItem(f"linked item ids are 16 hex characters, got {str(other)[:40]!r}")
    if spec.refines is not None:
        rows.append((s, _T["refines"], _ITEM + spec.refines, None))
        if spec.scope == "exception":
            rows.append((_ITEM + spec.refines, _T["hasException"], s, None))
    rows += [(s, _T["groundedByEpisode"], _ITEM + e, None) for e in spec.grounded_by]
    prov = spec.provenance or {}
    if prov.get("run"):
        run = str(run_iri(prov["run"]))
        rows += [(s, _GENERATED, run, None), (run, _TYPE, _T["Run"], None)]
    if prov.get("derived_from"):
        src = str(source_iri(str(prov["derived_from"])))
        rows += [(s, _DERIVED, src, None), (s, _T["derivedFromTrace"], src, None), (src, _TYPE, _T["Trajectory"], None)]


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
