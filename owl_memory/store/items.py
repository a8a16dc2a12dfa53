"""Memory items as typed values: `ItemSpec` (what a caller wants stored), its stable id and its RDF."""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from functools import cached_property
from urllib.parse import quote

from rdflib import Graph, Literal, URIRef
from rdflib.namespace import RDF, XSD

from ..errors import InvalidItem
from ..vocab import BLOB, FAILURE_MODE, ITEM, KINDS, OM, PROV, RUN, TASK_TYPE
from .blobs import sha256

IRI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\"{}|\\^`]+$")
ID = re.compile(r"^[0-9a-f]{16}$")
COUNTERS = {"use_count": OM.useCount, "success_count": OM.successCount, "failure_count": OM.failureCount}
_TUPLES = ("applies_to", "task_types", "failure_modes", "tags", "grounded_by")


def item_id(title: str, content: str, scope: str = "general") -> str:
    """Stable id: first 16 hex of sha256 over normalized title, content and scope."""
    norm_title = " ".join(unicodedata.normalize("NFC", title).split()).casefold()
    norm_content = "\n".join(ln.rstrip() for ln in unicodedata.normalize("NFC", content).strip().splitlines())
    raw = "\x1f".join((norm_title, norm_content, scope.strip().lower()))
    return sha256(raw)[:16]


@dataclass(frozen=True)
class ItemSpec:
    """What a caller wants stored as one memory item; normalized on construction (InvalidItem on bad fields).

    Args:
        kind: one of vocab.KINDS, any case ("antipattern" -> "AntiPattern").
        title, summary, content: the item's title (1-10 words), its "use when" line and its payload text.
        applies_to: ontology IRIs; task_types / failure_modes: names (slugged into IRIs); tags: free words.
        priority, confidence, scope: ranking fields; scope "exception" needs `refines`.
        refines: id of the general item this one narrows.
        provenance: {"run": run id, "derived_from": "sha256:..." key or IRI}.
        signature, action_schema, verification_hook: compiled-operator fields.
        grounded_by: ids of the Episodes this item was learned from.
    """

    kind: str
    title: str
    summary: str
    content: str
    applies_to: tuple[str, ...] = ()
    task_types: tuple[str, ...] = ()
    failure_modes: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    priority: int = 0
    confidence: float = 0.5
    scope: str = "general"
    refines: str | None = None
    provenance: dict | None = field(default=None, hash=False)
    signature: str | None = None
    action_schema: dict | None = field(default=None, hash=False)
    verification_hook: str | None = None
    grounded_by: tuple[str, ...] = ()

    def __post_init__(self):
        """Coerce fields to their types: kind name, strings, tuples of strings, int priority, float confidence."""
        put = object.__setattr__
        put(self, "kind", normalize_kind(self.kind))
        for name in ("title", "summary", "content", "scope"):
            put(self, name, str(getattr(self, name)))
        for name in _TUPLES:
            put(self, name, tuple(_strings(getattr(self, name))))
        try:
            put(self, "priority", int(self.priority))
            put(self, "confidence", float(self.confidence))
        except (TypeError, ValueError) as e:
            raise InvalidItem(f"priority must be an integer and confidence a number in [0, 1] ({e})") from e

    @cached_property
    def id(self) -> str:
        """The stable id this item gets: item_id(title, content, scope), computed once per spec (its fields are
        frozen)."""
        return item_id(self.title, self.content, self.scope)

    def to_dict(self) -> dict:
        """JSON-compatible form (tuples as lists); from_dict(to_dict()) == self."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, d: dict) -> ItemSpec:
        """An ItemSpec from its dict form; InvalidItem names unknown or missing fields."""
        known = {f.name for f in fields(cls)}
        extra = sorted(set(d) - known)
        if extra:
            raise InvalidItem(f"unknown item fields {extra}; use {sorted(known)}")
        try:
            return cls(**d)
        except TypeError as e:
            raise InvalidItem(f"an item needs kind, title, summary and content ({e})") from e


def normalize_kind(name: str) -> str:
    """The ontology class name of a kind given in any case ('antipattern' -> 'AntiPattern')."""
    by_lower = {k.lower(): k for k in KINDS}
    key = str(name).replace("_", "").replace("-", "").replace(" ", "").lower()
    if key not in by_lower:
        raise InvalidItem(f"unknown kind {str(name)[:40]!r}; use one of {', '.join(KINDS)}")
    return by_lower[key]


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
    """Ontology, task-type and failure-mode links (the nodes typed, so sh:class holds)."""
    for iri in spec.applies_to:
        if not IRI.match(iri):
            raise InvalidItem(f"applies_to needs ontology IRIs such as http://www.w3.org/ns/prov#, got {iri[:80]!r}")
        g.add((s, OM.appliesToOntology, URIRef(iri)))
        g.add((URIRef(iri), RDF.type, OM.TargetOntology))
    for prop, cls, node in ((OM.appliesToTaskType, OM.TaskType, task_type_iri),
                            (OM.preventsFailureMode, OM.FailureMode, failure_mode_iri)):
        for v in spec.task_types if prop == OM.appliesToTaskType else spec.failure_modes:
            g.add((s, prop, node(v)))
            g.add((node(v), RDF.type, cls))


def _compiled(g: Graph, s: URIRef, spec: ItemSpec) -> None:
    """Signature, action schema (canonical JSON) and verification hook, when given."""
    schema = None if spec.action_schema is None else _json(spec.action_schema)
    for prop, value in ((OM.violationSignature, spec.signature), (OM.verificationHook, spec.verification_hook),
                        (OM.actionSchema, schema)):
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


def _json(schema) -> str:
    """Canonical JSON of an action schema; InvalidItem when it is not JSON-compatible."""
    try:
        return json.dumps(schema, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError) as e:
        raise InvalidItem(f"action_schema must be a JSON-compatible dict ({e})") from e


def _strings(values) -> list[str]:
    """A str or an iterable of str as a list of non-empty strings."""
    return [str(v) for v in ([values] if isinstance(values, str) else list(values or ())) if str(v).strip()]
