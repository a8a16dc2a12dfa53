"""`Memory`: one directory holding the memory KG (owlready2 quadstore) and its payload blob store."""

from __future__ import annotations

import json
import re
import unicodedata
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote, unquote

from rdflib import Graph, Literal, URIRef
from rdflib.namespace import RDF, XSD

from ..errors import InvalidItem, UnknownItem
from ..vocab import BLOB, FAILURE_MODE, ITEM, KINDS, OM, PROV, RUN, TASK_TYPE
from . import retrieval
from .blobs import MAX_READ, BlobStore, sha256
from .quadstore import MemoryGraph
from .validation import check, require_valid

_ID = re.compile(r"^[0-9a-f]{16}$")
_IRI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\"{}|\\^`]+$")
_COUNTERS = {"use_count": OM.useCount, "success_count": OM.successCount, "failure_count": OM.failureCount}


def item_id(title: str, content: str, scope: str = "general") -> str:
    """Stable id: first 16 hex of sha256 over normalized title, content and scope."""
    norm_title = " ".join(unicodedata.normalize("NFC", title).split()).casefold()
    norm_content = "\n".join(ln.rstrip() for ln in unicodedata.normalize("NFC", content).strip().splitlines())
    raw = "\x1f".join((norm_title, norm_content, scope.strip().lower()))
    return sha256(raw)[:16]


class Memory:
    """A symbolic memory in one directory: `memory.sqlite3` (OWL items, FTS index) and `blobs.sqlite3` (payloads).

    Args:
        path: the memory directory; created when missing.
        max_read: characters one `window` read returns at most.

    Example:
        with Memory(".owl-memory") as m:
            i = m.add("Principle", "Bind values, never paste", "Use when a query takes user text.", "...")
            m.search("query user text")
    """

    def __init__(self, path: str | Path = ".owl-memory", max_read: int = MAX_READ):
        self.path = Path(path)
        if self.path.exists() and not self.path.is_dir():
            raise InvalidItem(f"{self.path} is a file; a memory is a directory (pass a new or existing folder)")
        self.path.mkdir(parents=True, exist_ok=True)
        self.blobs = BlobStore(self.path / "blobs.sqlite3", max_read)
        self.graph = MemoryGraph(self.path / "memory.sqlite3")
        self.max_read = max_read

    # ---- writes ----
    def add(self, kind: str, title: str, summary: str, content: str, *, applies_to=(), task_types=(),
            failure_modes=(), tags=(), priority: int = 0, confidence: float = 0.5, scope: str = "general",
            refines: str | None = None, provenance: dict | None = None, signature: str | None = None,
            action_schema: dict | None = None, verification_hook: str | None = None, grounded_by=()) -> str:
        """Validate and store one item; returns its stable id (the same id, unchanged, when already stored)."""
        kind = retrieval.normalize_kind(kind)
        i = item_id(str(title), str(content), str(scope))
        if self._storid(i) is not None:
            return i
        g = _item_graph(ITEM[i], kind, title, summary, content, applies_to, task_types, failure_modes, tags,
                        priority, confidence, scope, signature, action_schema, verification_hook)
        g += self._links(ITEM[i], refines, grounded_by, provenance)
        if scope == "exception" and refines is not None:
            g.add((ITEM[refines], OM.hasException, ITEM[i]))
        changed = [ITEM[i]] + ([ITEM[refines]] if scope == "exception" and refines is not None else [])
        require_valid(g, self._context(g, ITEM[i]), what=f"item {title!r}", focus=changed)
        self.blobs.put(content, "content")  # payload first: a crash before the graph commit leaves an orphan blob
        self._write(g, i, title, summary, tags, priority, confidence)
        return i

    def supersede(self, old_id: str, new_id: str) -> None:
        """Mark `old_id` as superseded by `new_id`: it is kept (archived) but never retrieved again."""
        for i in (old_id, new_id):
            self._require(i)
        if old_id == new_id:
            raise InvalidItem("an item cannot supersede itself; pass the id of the newer item")
        self._update(new_id, lambda s: self.graph.add(s, OM.supersedes, ITEM[old_id]))

    def record_use(self, id: str, success: bool) -> dict:
        """Count one use of an item and whether it succeeded; returns the new counters."""
        counts = {k: v for k, v in self.get(id).items() if k in _COUNTERS}
        counts["use_count"] += 1
        counts["success_count" if success else "failure_count"] += 1

        def write(s):
            for key, prop in _COUNTERS.items():
                self.graph.remove(s, prop)
                self.graph.add(s, prop, Literal(counts[key], datatype=XSD.nonNegativeInteger))

        self._update(id, write)
        return counts

    # ---- reads ----
    def get(self, id: str) -> dict:
        """Metadata, links, counters and compiled fields of an item; never its content text."""
        s = self._require(id)
        v = self.graph.values(s)
        one = {p: vals[0] for p, vals in v.items()}
        sid, objs = self.graph.sid, (lambda p: [str(o) for o in self.graph.objects(s, self.graph.sid[p])])
        schema = one.get(sid[OM.actionSchema])
        return {
            "id": id, **self._card(s, one), "scope": one[sid[OM.scope]],
            "task_types": [_slug(t) for t in objs(OM.appliesToTaskType)],
            "failure_modes": [_slug(t) for t in objs(OM.preventsFailureMode)], "tags": sorted(v.get(sid[OM.tag], [])),
            "refines": _ids(objs(OM.refines)), "supersedes": _ids(objs(OM.supersedes)),
            "exceptions": _ids(objs(OM.hasException)), "grounded_by": _ids(objs(OM.groundedByEpisode)),
            "content_ref": one[sid[OM.contentRef]], "content_hash": one[sid[OM.contentHash]],
            "size": self.blobs.ref(one[sid[OM.contentRef]]).size, "created_at": str(one.get(sid[OM.createdAt], "")),
            **{k: int(one.get(sid[p], 0)) for k, p in _COUNTERS.items()},
            "signature": one.get(sid[OM.violationSignature]),
            "action_schema": json.loads(schema) if schema else None,
            "verification_hook": one.get(sid[OM.verificationHook]),
            "provenance": {"run": objs(PROV.wasGeneratedBy), "derived_from": objs(PROV.wasDerivedFrom)},
        }

    def window(self, id: str, start: int = 0, length: int = MAX_READ) -> dict:
        """At most max_read characters of an item's content: {text, start, end, size}."""
        s = self._require(id)
        return self.blobs.read(self.graph.values(s)[self.graph.sid[OM.contentRef]][0], start, length)

    def search(self, text: str | None = None, ontology: str | None = None, task_type: str | None = None,
               failure_mode: str | None = None, kinds=None, k: int = 5) -> list[dict]:
        """Applicable items, best first: [{id, kind, title, summary, applies_to, priority, confidence, score}]."""
        q = self._query(text, ontology, task_type, failure_mode, kinds, k)
        return [] if q is None else [self._hit(s, i, score) for s, i, score in retrieval.rank(self.graph, q)]

    def by_signature(self, signature: str) -> list[dict]:
        """RepairOperators compiled for a violation signature, best first (success ratio, then id)."""
        sid = self.graph.sid
        rows = self.graph.db.execute(
            "SELECT r.iri FROM datas d JOIN resources r ON r.storid = d.s WHERE d.p = ? AND d.o = ? "
            "AND d.s NOT IN (SELECT o FROM objs WHERE p = ?)",
            (sid[OM.violationSignature], str(signature), sid[OM.supersedes])).fetchall()
        items = [self.get(iri[len(str(ITEM)):]) for (iri,) in rows]
        return sorted(items, key=lambda it: (-(it["success_count"] + 1) / (it["use_count"] + 2), it["id"]))

    def __len__(self) -> int:
        """Number of stored items (superseded ones included), counted on the index's row-size table."""
        return self.graph.db.execute("SELECT count(*) FROM om_fts_docsize").fetchone()[0]

    # ---- whole memory ----
    def validate(self) -> dict:
        """Validate every item against the memory shapes: {conforms, violation_count, messages}."""
        return check(self.graph.to_rdflib())

    def export(self, path: str | Path, format: str = "turtle") -> Path:
        """Write the memory (ontology and items) as RDF after validating it; nothing is written if it fails."""
        g = self.graph.to_rdflib()
        require_valid(g, what="the memory")
        g.serialize(destination=str(path), format=format)
        return Path(path)

    def close(self) -> None:
        """Close both stores."""
        self.graph.close()
        self.blobs.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"Memory({str(self.path)!r})"

    # ---- helpers ----
    def _storid(self, id: str) -> int | None:
        """Quadstore id of an item id, or None when no such item is stored."""
        if not isinstance(id, str) or not _ID.match(id):
            return None
        s = self.graph.storid(ITEM[id])
        return s if s is not None and self._kind(s) else None

    def _require(self, id: str) -> int:
        """Quadstore id of a stored item; UnknownItem otherwise."""
        s = self._storid(id)
        if s is None:
            raise UnknownItem(f"no memory item {str(id)[:40]!r}; ids are 16 hex characters, find them with search")
        return s

    def _kind(self, s: int) -> str | None:
        """The kind (class local name) of a stored item."""
        kinds = [str(o).rsplit("#", 1)[-1] for o in self.graph.objects(s, self.graph.sid[RDF.type])]
        return next((k for k in kinds if k in KINDS), None)

    def _links(self, s: URIRef, refines, grounded_by, provenance) -> Graph:
        """Triples linking a new item to stored items and to its provenance; UnknownItem for missing ids."""
        g = Graph(bind_namespaces="none")
        if refines is not None:
            self._require(refines)
            g.add((s, OM.refines, ITEM[refines]))
        for e in grounded_by:
            self._require(e)
            g.add((s, OM.groundedByEpisode, ITEM[e]))
        prov = provenance or {}
        if prov.get("run"):
            g.add((s, PROV.wasGeneratedBy, RUN[quote(str(prov["run"]), safe="")]))
            g.add((RUN[quote(str(prov["run"]), safe="")], RDF.type, OM.Run))
        if prov.get("derived_from"):
            src = _source(str(prov["derived_from"]))
            g.add((s, PROV.wasDerivedFrom, src))
            g.add((s, OM.derivedFromTrace, src))
            g.add((src, RDF.type, OM.Trajectory))
        return g

    def _context(self, g: Graph, item: URIRef) -> Graph:
        """Stored triples of the other items `g` touches and the types of its other nodes, for sh:class checks."""
        ctx = Graph(bind_namespaces="none")
        for node in (set(g.objects()) | set(g.subjects())) - {item}:
            sid = self.graph.storid(node) if isinstance(node, URIRef) else None
            if sid is not None:
                ctx += self.graph.triples(sid, None if str(node).startswith(str(ITEM)) else RDF.type)
        return ctx

    def _write(self, g: Graph, i: str, title: str, summary: str, tags, priority: int, confidence: float) -> None:
        """Write an item's triples and index row in one transaction."""
        try:
            self._stage(g, i, title, summary, tags, priority, confidence)
            self.graph.commit()
        except BaseException:
            self.graph.rollback()
            raise

    def _stage(self, g: Graph, i: str, title: str, summary: str, tags, priority: int, confidence: float) -> None:
        """Insert an item's triples and its retrieval index row, without committing."""
        for t in g:
            self.graph.add(*t)
        keys = retrieval.item_keys(self.graph, g, ITEM[i])
        self.graph.index_item(self.graph.storid(ITEM[i]), i, title, summary, " ".join(_strings(tags)), keys,
                              int(priority), float(confidence))

    def _update(self, id: str, change) -> None:
        """Apply `change(item IRI)` to a stored item, re-validate that item, commit or roll back."""
        s = ITEM[id]
        try:
            change(s)
            g = self.graph.triples(self.graph.storid(s))
            require_valid(g, self._context(g, s), what=f"item {id}", focus=[s])
            self.graph.commit()
        except BaseException:
            self.graph.rollback()
            raise

    def _query(self, text, ontology, task_type, failure_mode, kinds, k) -> retrieval.Query | None:
        """Bind a search's filters to quadstore ids; None when a filter names something never stored."""
        wanted = [(OM.appliesToOntology, ontology and str(ontology)),
                  (OM.appliesToTaskType, task_type and TASK_TYPE[_slugify(task_type)]),
                  (OM.preventsFailureMode, failure_mode and FAILURE_MODE[_slugify(failure_mode)])]
        filters = []
        for p, o in wanted:
            if o:
                oid = self.graph.storid(o)
                if oid is None:
                    return None
                filters.append((self.graph.sid[p], oid))
        k = max(0, min(int(k), retrieval.MAX_K))
        return retrieval.Query(tuple(filters), retrieval.kind_ids(self.graph, kinds), retrieval.words(text), k)

    def _hit(self, s: int, i: str, score: float) -> dict:
        """The search contract's dict for one ranked item."""
        one = {p: vals[0] for p, vals in self.graph.values(s).items()}
        return {"id": i, **self._card(s, one), "score": float(score)}

    def _card(self, s: int, one: dict) -> dict:
        """Kind, title, summary, applies_to, priority, confidence of a stored item (`one`: its data values)."""
        sid = self.graph.sid
        return {"kind": self._kind(s), "title": one[sid[OM.title]], "summary": one[sid[OM.summary]],
                "applies_to": [str(o) for o in self.graph.objects(s, sid[OM.appliesToOntology])],
                "priority": int(one.get(sid[OM.priority], 0)), "confidence": float(one[sid[OM.confidence]])}


def _item_graph(s, kind, title, summary, content, applies_to, task_types, failure_modes, tags, priority,
                confidence, scope, signature, action_schema, verification_hook) -> Graph:
    """The RDF of a new item (before validation); argument errors become InvalidItem."""
    g = Graph(bind_namespaces="none")
    try:
        g.add((s, RDF.type, OM[kind]))
        g.add((s, OM.title, Literal(str(title))))
        g.add((s, OM.summary, Literal(str(summary))))
        g.add((s, OM.scope, Literal(str(scope))))
        g.add((s, OM.confidence, Literal(float(confidence), datatype=XSD.double)))
        g.add((s, OM.priority, Literal(int(priority), datatype=XSD.integer)))
    except (TypeError, ValueError) as e:
        raise InvalidItem(f"priority must be an integer and confidence a number in [0, 1] ({e})") from e
    sha = sha256(str(content))
    g.add((s, OM.contentRef, Literal(f"sha256:{sha}")))
    g.add((s, OM.contentHash, Literal(sha)))
    g.add((s, OM.createdAt, Literal(datetime.now(timezone.utc).replace(microsecond=0), datatype=XSD.dateTime)))
    for c in _COUNTERS.values():
        g.add((s, c, Literal(0, datatype=XSD.nonNegativeInteger)))
    for t in _strings(tags):
        g.add((s, OM.tag, Literal(t)))
    for iri in _strings(applies_to):
        if not _IRI.match(iri):
            raise InvalidItem(f"applies_to needs ontology IRIs such as http://www.w3.org/ns/prov#, got {iri[:80]!r}")
        g.add((s, OM.appliesToOntology, URIRef(iri)))
        g.add((URIRef(iri), RDF.type, OM.TargetOntology))
    for prop, ns, cls, values in ((OM.appliesToTaskType, TASK_TYPE, OM.TaskType, task_types),
                                  (OM.preventsFailureMode, FAILURE_MODE, OM.FailureMode, failure_modes)):
        for v in _strings(values):
            g.add((s, prop, ns[_slugify(v)]))
            g.add((ns[_slugify(v)], RDF.type, cls))
    for prop, value in ((OM.violationSignature, signature), (OM.verificationHook, verification_hook),
                        (OM.actionSchema, action_schema if action_schema is None else _json(action_schema))):
        if value is not None:
            g.add((s, prop, Literal(str(value))))
    return g


def _json(schema) -> str:
    """Canonical JSON of an action schema; InvalidItem when it is not JSON-compatible."""
    try:
        return json.dumps(schema, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError) as e:
        raise InvalidItem(f"action_schema must be a JSON-compatible dict ({e})") from e


def _strings(values) -> list[str]:
    """A str or an iterable of str as a list of non-empty strings."""
    return [v for v in ([values] if isinstance(values, str) else list(values or ())) if str(v).strip()]


def _slugify(text: str) -> str:
    """An IRI-safe slug of a task type or failure mode name (case-folded, spaces as dashes)."""
    return quote("-".join(str(text).strip().casefold().split()), safe="-._~")


def _slug(iri: str) -> str:
    """The slug at the end of a task-type or failure-mode IRI."""
    return unquote(iri.rsplit("/", 1)[-1])


def _ids(iris: list[str]) -> list[str]:
    """Item ids of item IRIs."""
    return [i[len(str(ITEM)):] for i in iris if i.startswith(str(ITEM))]


def _source(ref: str) -> URIRef:
    """The IRI a provenance source names: a blob key becomes a blob IRI, an IRI stays as it is."""
    if ref.startswith("sha256:"):
        return BLOB[ref.removeprefix("sha256:")]
    if _IRI.match(ref):
        return URIRef(ref)
    raise InvalidItem(f"provenance derived_from must be a blob key (sha256:...) or an IRI, got {ref[:80]!r}")


