"""Memory tools: search items by metadata, read an item's compiled fields and capped windows of its content, and
query the memory graph (a results handle). Offered when the run's condition grants memory tools (A2-A4)."""

from __future__ import annotations

from rdflib import Literal, URIRef

from ...errors import ToolError
from ...model import Item, MemoryNote
from ...model.items import check_visible
from ...model.judge_rules import placeholder
from ...model.operators import QueryRecipe
from ...store import ontology_context
from ...vocab import is_iri
from .caps import as_count, as_int, as_text, clip
from .results import run_query
from .toolbox import ToolFamily, family

MAX_K = 10  # items one memory_search may return
NOTE_CHARS = 300  # characters of one memory_note (the trajectory schema's bound)


@family
class MemoryTools(ToolFamily):
    """Procedural memory behind ids and metadata; content only in budgeted windows (whole under A4)."""

    order = 20
    names = ("memory_search", "memory_get", "memory_window", "memory_query", "memory_apply", "memory_note")

    def offered(self) -> bool:
        """Only with a memory, and only when the condition reaches memory through tools."""
        return self.box.memory is not None and self.box.access.tools

    def memory_search(self, text: str = "", ontology: str = "", task_type: str = "", kinds: list[str] | None = None,
                      k: int = 5, about_class: str = "", about_property: str = "") -> dict | str:
        """Memory items (id, kind, title, summary, score) matching text / ontology IRI / task type / the class or
        property IRI they are about; with your ontology's IRI, items of its earlier versions and aligned terms come
        after, marked carried_over_from; k is 1 to 10; no payload."""
        box = self.box
        onto = as_text(ontology, "ontology") or None
        hits = box.require_memory().search(text=as_text(text, "text") or None, ontology=onto,
                                 task_type=as_text(task_type, "task_type") or None,
                                 kinds=[str(x) for x in kinds] if kinds else None, k=as_count(k, "k", MAX_K),
                                 about_class=as_text(about_class, "about_class") or None,
                                 about_property=as_text(about_property, "about_property") or None,
                                 context=ontology_context(box.graph) if onto and box.graph is not None else None)
        for rank, h in enumerate(hits, 1):
            box.used(h.id, rank=rank, score=h.score)
        if box.access.uncapped:
            return {"items": [{**h.to_dict(), "content": self._content(box.require_memory().get(h.id))} for h in hits],
                    "count": len(hits)}
        items = [{key: clip(v) if isinstance(v, str) else v for key, v in h.to_dict().items()} for h in hits]
        return {"items": items, "count": len(items)}

    def memory_get(self, id: str) -> dict | str:
        """Metadata and compiled fields (signature, action_schema, verification_hook) of one item; no payload."""
        item = self._item(id)
        if self.box.access.uncapped:
            return {**item.to_dict(), "content": self._content(item)}
        return {k: clip(v, 300) if isinstance(v, str) else v for k, v in item.to_dict().items()}

    def memory_window(self, id: str, start: int = 0, length: int = 512) -> dict | str:
        """Up to `length` characters of one memory item's content from offset `start` (capped, budgeted)."""
        item, box = self._item(id), self.box
        window = box.blobs.read(item.content_ref, as_int(start, "start"), as_int(length, "length"), budget=box.budget)
        return {**window.to_dict(), "id": item.id, "budget_left": box.left()}

    def memory_query(self, sparql: str) -> dict | str:
        """Run a read-only SPARQL query over the memory graph (items, links, provenance; no item content), as it was
        at your first memory_query; returns a results handle and row count (read rows with results_peek).
        Prefix om: <http://w3id.org/owl-memory#>."""
        return run_query(self.box, "memory", self.box.require_memory().to_graph, sparql)

    def memory_apply(self, id: str, bindings: dict | None = None) -> dict | str:
        """Run item `id`'s compiled query pattern (memory_get: action_schema) on your ontology, its parameters bound
        from `bindings`, e.g. {"$p1": "lib:Work"}; a results handle like ontology_query."""
        item, box = self._item(id), self.box
        recipe = item.action_schema
        if not isinstance(recipe, QueryRecipe):
            raise ToolError(f"item {item.id} has no compiled query pattern (its action_schema is "
                            f"{getattr(recipe, 'operator', None) or 'empty'}); read it with memory_window instead")
        if box.graph is None:
            raise ToolError("memory_apply runs on the run's ontology and this run has none; write the query yourself "
                            "(endpoint_query) from the pattern memory_get shows")
        given = bindings or {}
        missing = [p.name for p in recipe.parameters if p.name not in given]
        if missing:
            raise ToolError(f"bind every parameter of the pattern: bindings={{{', '.join(repr(m) for m in missing)}: "
                            "...}} (an IRI or CURIE for kind iri, a string for kind literal)")
        graph = box.graph
        values = {URIRef(placeholder(p.name[1:])): self._term(p.kind, given[p.name], p.name) for p in recipe.parameters}
        return run_query(box, "ontology", lambda: graph, recipe.sparql(), tool="memory_apply", bindings=values)

    def memory_note(self, id: str, text: str) -> dict | str:
        """Propose a distilled field or a refinement of item `id` (1 to 300 characters); the learning loop stores it
        as a refinement when the run succeeds and consolidation accepts it."""
        item, note = self._item(id), " ".join(as_text(text, "text").split())
        if not 0 < len(note) <= NOTE_CHARS:
            raise ToolError(f"a note is 1 to {NOTE_CHARS} characters, got {len(note)}; say the one thing to change")
        check_visible("text", note)
        self.box.emit(MemoryNote(item.id, note))
        return {"noted": item.id, "chars": len(note)}

    def _term(self, kind: str, value: object, name: str) -> URIRef | Literal:
        """A binding as one RDF term: a literal, or an IRI (full, <IRI> or a CURIE of the ontology's prefixes)."""
        text = as_text(value, name).strip()
        if kind != "iri":
            return Literal(text)
        graph = self.box.graph
        text = text[1:-1] if text.startswith("<") and text.endswith(">") else text
        if graph is not None and "//" not in text and not text.startswith("urn:"):  # a CURIE, or not an IRI at all
            try:
                text = str(graph.namespace_manager.expand_curie(text))
            except ValueError:
                raise ToolError(f"{name}: {clip(text, 80)!r} is neither a full IRI nor a CURIE of the ontology's "
                                "prefixes (ontology_stats lists them)") from None
        if not is_iri(text):
            raise ToolError(f"{name} must be an IRI or a CURIE of the ontology's prefixes, got {clip(text, 80)!r}")
        return URIRef(text)

    def _item(self, id: object) -> Item:
        """The item `id` names, recorded as used (its content is a payload to watch)."""
        item = self.box.require_memory().get(as_text(id, "id").strip())
        self.box.used(item.id, item.content_ref)
        return item

    def _content(self, item: Item) -> str:
        """An item's whole content (A4 only), watched for leakage."""
        self.box.watch(item.content_ref)
        return self.box.blobs.load(item.content_ref)
