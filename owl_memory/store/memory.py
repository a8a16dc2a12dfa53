"""`Memory`: one directory holding the memory KG (owlready2 quadstore) and its payload blob store."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import unquote

from rdflib import Graph, Literal, URIRef
from rdflib.namespace import RDF, XSD

from ..errors import InvalidItem, UnknownItem
from ..rdfio import check_output, write_graph
from ..vocab import ITEM, KINDS, OM, PROV
from . import retrieval
from .blobs import MAX_READ, BlobStore
from .items import COUNTERS, ID, ItemSpec, failure_mode_iri, item_graph, linked_ids, task_type_iri
from .quadstore import MemoryGraph
from .validation import check, require_valid


class Memory:
    """A symbolic memory in one directory: `memory.sqlite3` (OWL items, FTS index) and `blobs.sqlite3` (payloads).

    Args:
        path: the memory directory; created when missing.
        max_read: characters one `window` read returns at most.

    Example:
        with Memory(".owl-memory") as m:
            i = m.add(ItemSpec("Principle", "Bind values, never paste", "Use when a query takes user text.", "..."))
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
    def add(self, spec: ItemSpec) -> str:
        """Validate and store one item; returns its stable id (the same id, unchanged, when already stored)."""
        return self.add_many([spec])[0]

    def add_many(self, specs: Iterable[ItemSpec], *, batch: int = 1000, validate: bool = True) -> list[str]:
        """Store many items, one transaction per `batch`; returns their ids in order (stored ones unchanged).

        Every batch is checked against the shapes in one pyshacl run (about 3 ms per item) before anything of it
        is written; `validate=False` skips that for trusted bulk loads (generated benchmarks, copies of a memory
        that validated at its source).
        """
        ids: list[str] = []
        specs = list(specs)
        for at in range(0, len(specs), batch):
            ids += self._add_batch(specs[at: at + batch], validate)
        return ids

    def _add_batch(self, specs: list[ItemSpec], validate: bool) -> list[str]:
        """Build, check and write one batch of items in one transaction."""
        for spec in specs:
            if not isinstance(spec, ItemSpec):
                raise InvalidItem(f"add takes an ItemSpec, got {type(spec).__name__}; build one with ItemSpec(...)")
        new, graphs = {}, []
        for spec in specs:
            if spec.id in new or self._storid(spec.id) is not None:
                continue
            for other in linked_ids(spec):
                if other not in new:
                    self._require(other)
            new[spec.id] = spec
            graphs.append(item_graph(spec))
        if validate and new:
            self._check_batch(list(new.values()), graphs)
        if new:
            self._write(list(new.values()), graphs)
        return [s.id for s in specs]

    def _check_batch(self, specs: list[ItemSpec], graphs: list[Graph]) -> None:
        """Validate a batch in one pyshacl run; on failure, name the first failing item (InvalidItem)."""
        union = Graph(bind_namespaces="none")
        for g in graphs:
            union += g
        focus = sorted({node for s in specs for node in _changed(s)})
        if len(specs) > 1 and check(union, self._context(union, [ITEM[s.id] for s in specs]), focus=focus)["conforms"]:
            return
        for spec, g in zip(specs, graphs, strict=True):
            changed = _changed(spec)
            batch = [graphs[specs.index(s)] for s in specs if s.id in linked_ids(spec)]
            require_valid(g, *batch, self._context(g, [ITEM[spec.id]]), what=f"item {str(spec.title)[:60]!r}",
                          focus=changed)

    def supersede(self, old_id: str, new_id: str) -> None:
        """Mark `old_id` as superseded by `new_id`: it is kept (archived) but never retrieved again."""
        for i in (old_id, new_id):
            self._require(i)
        if old_id == new_id:
            raise InvalidItem("an item cannot supersede itself; pass the id of the newer item")
        self._update(new_id, lambda s: self.graph.add(s, OM.supersedes, ITEM[old_id]))

    def record_use(self, id: str, success: bool) -> dict:
        """Count one use of an item and whether it succeeded; returns the new counters."""
        counts = {k: v for k, v in self.get(id).items() if k in COUNTERS}
        counts["use_count"] += 1
        counts["success_count" if success else "failure_count"] += 1

        def write(s):
            for key, prop in COUNTERS.items():
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
            **{k: int(one.get(sid[p], 0)) for k, p in COUNTERS.items()},
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
    def validate(self, ids: Iterable[str] | None = None) -> dict:
        """Validate every item (or only the items `ids`) against the memory shapes: {conforms, violation_count,
        messages}."""
        if ids is None:
            return check(self.to_graph())
        nodes = [ITEM[i] for i in ids if self._require(i)]
        g = Graph(bind_namespaces="none")
        for node in nodes:
            g += self.graph.triples(self.graph.storid(node))
        return check(g, self._context(g, nodes), focus=nodes)

    def to_graph(self) -> Graph:
        """The whole memory (ontology, items, provenance) as an rdflib Graph, not validated."""
        return self.graph.to_rdflib()

    def export(self, path: str | Path, format: str = "turtle") -> Path:
        """Write the memory (ontology and items) as RDF after validating it; nothing is written if it fails."""
        check_output(path, format)
        g = self.to_graph()
        require_valid(g, what="the memory")
        return write_graph(g, path, format)

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
        if not isinstance(id, str) or not ID.match(id):
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

    def _context(self, g: Graph, items: list) -> Graph:
        """Stored triples of the other items `g` touches and the types of its other nodes, for sh:class checks."""
        ctx = Graph(bind_namespaces="none")
        for node in (set(g.objects()) | set(g.subjects())) - set(items):
            sid = self.graph.storid(node) if isinstance(node, URIRef) else None
            if sid is not None:
                ctx += self.graph.triples(sid, None if str(node).startswith(str(ITEM)) else RDF.type)
        return ctx

    def _write(self, specs: list[ItemSpec], graphs: list[Graph]) -> None:
        """Write items' payloads, then their triples and index rows in one transaction."""
        for spec in specs:  # payloads first: a crash before the graph commit leaves orphan blobs only
            self.blobs.put(spec.content, "content")
        try:
            for spec, g in zip(specs, graphs, strict=True):
                self._stage(spec, g)
            self.graph.commit()
        except BaseException:
            self.graph.rollback()
            raise

    def _stage(self, spec: ItemSpec, g: Graph) -> None:
        """Insert an item's triples and its retrieval index row, without committing."""
        for t in g:
            self.graph.add(*t)
        keys = retrieval.item_keys(self.graph, g, ITEM[spec.id])
        self.graph.index_item(self.graph.storid(ITEM[spec.id]), spec.id, spec.title, spec.summary,
                              " ".join(spec.tags), keys, spec.priority, spec.confidence)

    def _update(self, id: str, change) -> None:
        """Apply `change(item IRI)` to a stored item, re-validate that item, commit or roll back."""
        s = ITEM[id]
        try:
            change(s)
            g = self.graph.triples(self.graph.storid(s))
            require_valid(g, self._context(g, [s]), what=f"item {id}", focus=[s])
            self.graph.commit()
        except BaseException:
            self.graph.rollback()
            raise

    def _query(self, text, ontology, task_type, failure_mode, kinds, k) -> retrieval.Query | None:
        """Bind a search's filters to quadstore ids; None when a filter names something never stored."""
        wanted = [(OM.appliesToOntology, ontology and str(ontology)),
                  (OM.appliesToTaskType, task_type and task_type_iri(task_type)),
                  (OM.preventsFailureMode, failure_mode and failure_mode_iri(failure_mode))]
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


def _slug(iri: str) -> str:
    """The slug at the end of a task-type or failure-mode IRI."""
    return unquote(iri.rsplit("/", 1)[-1])


def _ids(iris: list[str]) -> list[str]:
    """Item ids of item IRIs."""
    return [i[len(str(ITEM)):] for i in iris if i.startswith(str(ITEM))]


def _changed(spec: ItemSpec) -> list[URIRef]:
    """The nodes a new item's triples describe: the item, and the rule it refines when it is an exception."""
    return [ITEM[spec.id]] + ([ITEM[spec.refines]] if spec.scope == "exception" and spec.refines is not None else [])
