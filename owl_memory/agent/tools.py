"""The DSPy tool surface: capped, budgeted tools over prompt, memory, ontology and results handles.

Every tool returns a JSON-compatible value whose serialized form is at most MAX_RETURN characters,
whatever its arguments; every payload read goes through the run's ReadBudget; a recoverable failure
returns a string starting "[Error]" that says what to do instead.
"""

from __future__ import annotations

import inspect
import json
import re
import threading
from collections.abc import Callable
from pathlib import Path

import dspy
from pydantic import PrivateAttr
from rdflib import Graph, URIRef
from rdflib.namespace import OWL, RDF, RDFS

from ..errors import CapExceeded, OwlMemoryError, ToolError, UnknownItem
from ..model import Ref
from ..rdfio import load_graph
from ..store.blobs import BlobStore, ReadBudget
from .dspy_compat import validate_tool_args, with_callbacks
from .query_worker import QueryLimits, QueryResult, QueryWorker

MAX_RETURN = 2_000  # serialized characters one tool return may take
MAX_LIST = 50  # entries one listing may return
MAX_CALLS = 400  # tool calls one run may make
MAX_ARG = 4_000  # characters of a string argument (a pattern, a query)
LARGE_RETURN = 1_000  # a return above this many serialized characters counts as large

_CLASS_TYPES = (OWL.Class, RDFS.Class)
_KIND = {"integer": "an integer", "string": "a string", "number": "a number", "boolean": "true or false",
         "array": "a list", "object": "a dict"}  # JSON-schema types as the fix-it message names them
_PROPERTY_TYPES = {OWL.ObjectProperty: "object", OWL.DatatypeProperty: "datatype",
                   OWL.AnnotationProperty: "annotation", RDF.Property: "rdf"}


def dumps(value) -> str:
    """The serialized form a tool return is measured by."""
    return json.dumps(value, ensure_ascii=False, default=str)


def clip(text, n: int = 200) -> str:
    """A string cut to n characters, marked with … when cut."""
    text = str(text)
    return text if len(text) <= n else text[: n - 1] + "…"


class Toolbox:
    """The state behind one run's tools: handles, read budget, caps and a log of calls.

    Args:
        memory: a Memory (its blob store holds the payloads), or None for a run without memory tools.
        prompt: the prompt text (stored as a "prompt" blob) or a Ref to one; never shown whole.
        ontology: a path, Turtle text or rdflib Graph loaded with load_graph.
        budget: the run's ReadBudget (a fresh default one when None).
        observer: called with each tool_call / tool_result event (sizes and handles, no payload).
        blobs: the blob store to use when there is no memory (an in-memory one by default).
        query_limits: wall time, memory and rows of each agent SPARQL query (QueryLimits() by default:
            10 s, 512 MB, 10,000 rows); a query runs in a worker process killed when it passes a limit.
        uncapped: the A4 negative control: returns are not cut to MAX_RETURN, memory_search / memory_get carry
            each item's whole content and queries return all their rows inline (leakage is still measured).
    """

    def __init__(self, memory=None, prompt: str | Ref | None = None, ontology: str | Path | Graph | None = None,
                 budget: ReadBudget | None = None, *, observer: Callable[[dict], None] | None = None,
                 blobs: BlobStore | None = None, max_calls: int = MAX_CALLS,
                 query_limits: QueryLimits | None = None, uncapped: bool = False):
        self.memory, self.uncapped = memory, uncapped
        self.blobs = memory.blobs if memory is not None else (blobs or BlobStore(":memory:"))
        self.scratch = BlobStore(":memory:", max_read=self.blobs.max_read)  # this run's query results
        self.budget = budget or ReadBudget(max_read=self.blobs.max_read)
        self.prompt = self.blobs.put(prompt, "prompt") if isinstance(prompt, str) else prompt
        self.graph = load_graph(ontology) if ontology is not None else None
        self.observer, self.max_calls = observer, max_calls
        self.query_limits = query_limits or QueryLimits()
        self._workers: dict[str, QueryWorker] = {}  # "ontology" / "memory" -> its query worker, started on first use
        self._lock = threading.RLock()  # interpreters call tools from worker threads; one call at a time
        self.results: dict[str, list[int]] = {}  # results handle -> line start offsets (plus the end)
        self.payloads: list[Ref] = [self.prompt] if self.prompt is not None else []
        self.memory_ids_used: list[str] = []
        self.memory_usage: dict[str, tuple[int, float]] = {}  # id -> (rank, score) where the agent first met it
        self.vocabulary: set[str] = set()  # IRIs and namespaces the tools show: vocabulary, not payload
        self.stats = {"tool_calls": 0, "tool_errors": 0, "large_returns": 0, "max_return": 0, "max_window": 0}

    # ---- exposure -------------------------------------------------------------------------------------------

    def functions(self) -> list[OwlTool]:
        """The tools as OwlTool objects (dspy.Tool), ready for dspy.RLM(sig, tools=...) or direct calls."""
        names = ["prompt_stats", "prompt_window", "prompt_find", "handle_window"]
        if self.memory is not None:
            names += ["memory_search", "memory_get", "memory_window", "memory_query"]
        names += ["ontology_stats", "ontology_classes", "ontology_properties", "ontology_describe",
                  "ontology_query", "results_peek"]
        return [OwlTool(getattr(self, n), self) for n in names]

    def _call(self, tool: OwlTool, args: tuple, kwargs: dict):
        """Run one tool call: bind and check arguments, enforce caps, turn recoverable failures into "[Error] …"."""
        with self._lock:  # interpreters call tools from worker threads; one call at a time
            self.stats["tool_calls"] += 1
            try:
                bound, problem = _bind(tool.func, args, kwargs), None
                args, kwargs = (), dict(bound.arguments)  # the trajectory shows every argument by name
            except ToolError as e:
                bound, problem = None, e
            self._emit({"event": "tool_call", "tool": tool.name, "args": _describe_args(args, kwargs)})
            value = self._guarded(tool, bound, problem, args, kwargs)
            self._record(tool.name, value)
            return value

    def _guarded(self, tool: OwlTool, bound, problem: ToolError | None, args: tuple, kwargs: dict):
        """The tool's capped return, or an "[Error] …" string that never echoes an argument value."""
        name = tool.name
        if problem is None and self.stats["tool_calls"] > self.max_calls:
            problem = ToolError(f"this run's limit of {self.max_calls} tool calls is reached; SUBMIT what you have")
        if problem is not None:
            return f"[Error] {name}: {clip(_scrub(str(problem), args, kwargs), 300)}"
        try:
            parsed = validate_tool_args(tool, bound.arguments)  # dspy.Tool's JSON-schema and pydantic check
        except ValueError as e:  # its messages echo argument values; say what to pass instead
            return f"[Error] {name}{_signature(tool.func)}: {_argument_problem(e, tool.args)}"
        try:
            value = tool.func(**parsed)
            return value if self.uncapped else _fit(value)
        except (OwlMemoryError, ValueError, KeyError) as e:
            return f"[Error] {name}: {clip(_scrub(_message(e), args, kwargs), 300)}"

    def _record(self, name: str, value) -> None:
        """Update the counters and emit the tool_result event for one return."""
        size = len(dumps(value))
        is_error = isinstance(value, str) and value.startswith("[Error]")
        self.stats["tool_errors"] += is_error
        self.stats["large_returns"] += size > LARGE_RETURN
        self.stats["max_return"] = max(self.stats["max_return"], size)
        if isinstance(value, dict) and isinstance(value.get("text"), str):
            self.stats["max_window"] = max(self.stats["max_window"], len(value["text"]))
        handles = sorted({v for v in _strings(value) if v.startswith("sha256:")})
        self._emit({"event": "tool_result", "tool": name, "chars": size, "error": is_error,
                    "handles": handles[:20], "message": value[:300] if is_error else None})

    def _emit(self, event: dict) -> None:
        """Pass an event to the observer, if any."""
        if self.observer is not None:
            self.observer(event)

    # ---- prompt ---------------------------------------------------------------------------------------------

    def prompt_stats(self) -> dict | str:
        """Size, sha and handle of the hidden prompt, plus your read budget. Read text with prompt_window."""
        ref = self._need_prompt()
        return {**ref.to_dict(), "lines": self.blobs.load(ref).count("\n") + 1, **self._budget_info()}

    def prompt_window(self, start: int = 0, length: int = 512) -> dict | str:
        """Up to `length` characters of the prompt from offset `start` (capped per read and by the budget)."""
        ref = self._need_prompt()
        return {**self.blobs.read(ref, _int(start, "start"), _int(length, "length"), budget=self.budget).to_dict(),
                "budget_left": self._left()}

    def prompt_find(self, pattern: str, limit: int = 20) -> dict | str:
        """Offsets (never text) where the literal `pattern` occurs in the prompt; read them with prompt_window."""
        ref, pattern = self._need_prompt(), _text(pattern, "pattern")
        if not pattern:
            raise ToolError("pattern is empty; pass the literal text to look for")
        hits = self.blobs.find(ref, pattern, limit=_limit(limit) + 1)
        return {"offsets": hits[: _limit(limit)], "count": len(hits[: _limit(limit)]),
                "more": len(hits) > _limit(limit), "pattern_chars": len(pattern)}

    def handle_window(self, ref: str, start: int = 0, length: int = 512) -> dict | str:
        """Up to `length` characters of the payload behind handle `ref` ("sha256:…") from offset `start`."""
        key = _text(ref, "ref").strip()
        self._store(key).ref(key)  # UnknownItem before anything is charged
        self._watch(key)
        window = self._store(key).read(key, _int(start, "start"), _int(length, "length"), budget=self.budget)
        return {**window.to_dict(), "budget_left": self._left()}

    # ---- memory ---------------------------------------------------------------------------------------------

    def memory_search(self, text: str = "", ontology: str = "", task_type: str = "", kinds: list[str] | None = None,
                      k: int = 5) -> dict | str:
        """Memory items (id, kind, title, summary, score) matching text / ontology IRI / task type; no payload."""
        hits = self.memory.search(text=_text(text, "text") or None, ontology=_text(ontology, "ontology") or None,
                                  task_type=_text(task_type, "task_type") or None,
                                  kinds=[str(x) for x in kinds] if kinds else None, k=max(1, min(_int(k, "k"), 10)))
        for rank, h in enumerate(hits, 1):
            self._used(h.id, rank=rank, score=h.score)
        if self.uncapped:
            return {"items": [{**h.to_dict(), "content": self._content(self.memory.get(h.id).content_ref)}
                              for h in hits], "count": len(hits)}
        items = [{key: clip(v) if isinstance(v, str) else v for key, v in h.to_dict().items()} for h in hits]
        return {"items": items, "count": len(items)}

    def memory_get(self, id: str) -> dict | str:
        """Metadata and compiled fields (signature, action_schema, verification_hook) of one item; no payload."""
        item = self.memory.get(_text(id, "id").strip())
        self._used(item.id, item.content_ref)
        if self.uncapped:
            return {**item.to_dict(), "content": self._content(item.content_ref)}
        return {k: clip(v, 300) if isinstance(v, str) else v for k, v in item.to_dict().items()}

    def memory_window(self, id: str, start: int = 0, length: int = 512) -> dict | str:
        """Up to `length` characters of one memory item's content from offset `start` (capped, budgeted)."""
        item = self.memory.get(_text(id, "id").strip())
        self._used(item.id, item.content_ref)
        return {**self.blobs.read(item.content_ref, _int(start, "start"), _int(length, "length"),
                                  budget=self.budget).to_dict(), "id": item.id, "budget_left": self._left()}

    def memory_query(self, sparql: str) -> dict | str:
        """Run a read-only SPARQL query over the memory graph (items, links, provenance; no item content), as it was
        at your first memory_query; returns a results handle and row count (read rows with results_peek).
        Prefix om: <http://w3id.org/owl-memory#>."""
        return self._query("memory", self.memory.to_graph, sparql)

    # ---- ontology -------------------------------------------------------------------------------------------

    def ontology_stats(self) -> dict | str:
        """Counts of triples, classes, properties and individuals in the ontology, its IRI and prefixes."""
        g = self._need_graph()
        prefixes = {p: str(ns) for p, ns in g.namespaces() if p}
        self.vocabulary.update(prefixes.values())
        return {"ontology": [str(o) for o in g.subjects(RDF.type, OWL.Ontology)][:3], "triples": len(g),
                "classes": len(self._classes()), "properties": len(self._properties()),
                "individuals": len(set(g.subjects(RDF.type, OWL.NamedIndividual))),
                "prefixes": dict(sorted(prefixes.items())[:12])}

    def ontology_classes(self, limit: int = 20, offset: int = 0) -> dict | str:
        """Named classes (iri, label), sorted by IRI; page with offset."""
        classes, start = self._classes(), max(0, _int(offset, "offset"))
        page = classes[start:start + _limit(limit)]
        return {"total": len(classes), "offset": start, "classes": [{"iri": str(c), "label": self._label(c)}
                                                                    for c in page]}

    def ontology_properties(self, limit: int = 20, offset: int = 0) -> dict | str:
        """Named properties (iri, kind, label), sorted by IRI; page with offset."""
        props, start = self._properties(), max(0, _int(offset, "offset"))
        page = props[start:start + _limit(limit)]
        return {"total": len(props), "offset": start,
                "properties": [{"iri": str(p), "kind": kind, "label": self._label(p)} for p, kind in page]}

    def ontology_describe(self, iri: str, limit: int = 10) -> dict | str:
        """One term: types, label, comment, direct super/subclasses, domain/range (lists capped at limit)."""
        g, term, n = self._need_graph(), self._term(iri), _limit(limit)

        def iris(nodes):
            return sorted({str(x) for x in nodes if isinstance(x, URIRef)})[:n]

        comment = g.value(term, RDFS.comment)
        return {"iri": str(term), "label": self._label(term), "types": iris(g.objects(term, RDF.type)),
                "comment": clip(comment, 200) if comment is not None else "",
                "superclasses": iris(g.objects(term, RDFS.subClassOf)),
                "subclasses": iris(g.subjects(RDFS.subClassOf, term)),
                "domain": iris(g.objects(term, RDFS.domain)), "range": iris(g.objects(term, RDFS.range)),
                "properties_with_domain": iris(g.subjects(RDFS.domain, term)),
                "triples_as_subject": len(list(g.predicate_objects(term)))}

    def ontology_query(self, sparql: str) -> dict | str:
        """Run a read-only SPARQL query; returns a results handle and row count (read rows with results_peek)."""
        return self._query("ontology", self._need_graph, sparql)

    def _query(self, name: str, graph: Callable[[], Graph], sparql: str) -> dict:
        """Run a query in the worker over `name`'s graph (built by `graph()` when the worker first starts)."""
        sparql = _text(sparql, "sparql")
        if name not in self._workers:
            self._workers[name] = QueryWorker(graph(), self.query_limits)
        result = self._workers[name].query(sparql)
        if result.kind == "ASK":
            return {"ask": result.ask}
        return self._store_rows(result)

    def results_peek(self, handle: str, n: int = 5, offset: int = 0) -> dict | str:
        """Up to n rows (max 20) of a results handle from row `offset`; capped per read and by the budget."""
        key = _text(handle, "handle").strip()
        if key not in self.results:
            raise ToolError("unknown results handle; pass the 'handle' value ontology_query returned")
        starts, first = self.results[key], max(0, _int(offset, "offset"))
        total = len(starts) - 1
        last = min(total, first + max(1, min(_int(n, "n"), 20)))
        if first >= total:
            return {"rows": [], "offset": first, "total": total, "next": None}
        window = self.scratch.read(key, starts[first], starts[last] - starts[first], budget=self.budget)
        rows = _whole_rows(window.text)
        out = {"rows": rows or [], "offset": first, "total": total, "budget_left": self._left()}
        if not rows:  # one row longer than a read: show its start, flagged
            out["partial_row"] = window.text
        out["next"] = first + max(1, len(rows)) if first + max(1, len(rows)) < total else None
        return out

    # ---- helpers --------------------------------------------------------------------------------------------

    def _need_prompt(self) -> Ref:
        """The prompt handle, or a ToolError saying this run has none."""
        if self.prompt is None:
            raise ToolError("this run has no prompt; work from the task and the other tools")
        return self.prompt

    def _need_graph(self) -> Graph:
        """The ontology graph, or a ToolError saying this run has none."""
        if self.graph is None:
            raise ToolError("this run has no ontology; pass one with --ontology / ontology=")
        return self.graph

    def _classes(self) -> list[URIRef]:
        """Named classes, sorted (cached)."""
        if not hasattr(self, "_class_list"):
            g = self._need_graph()
            self._class_list = sorted({c for t in _CLASS_TYPES for c in g.subjects(RDF.type, t)
                                       if isinstance(c, URIRef)})
        return self._class_list

    def _properties(self) -> list[tuple[URIRef, str]]:
        """Named properties with their kind, sorted (cached)."""
        if not hasattr(self, "_property_list"):
            g, seen = self._need_graph(), {}
            for t, kind in _PROPERTY_TYPES.items():
                for p in g.subjects(RDF.type, t):
                    if isinstance(p, URIRef):
                        seen.setdefault(p, kind)
            self._property_list = sorted(seen.items())
        return self._property_list

    def _label(self, term) -> str:
        """The term's rdfs:label (English first), clipped."""
        labels = list(self.graph.objects(term, RDFS.label))
        labels.sort(key=lambda x: (getattr(x, "language", None) not in (None, "en"), str(x)))
        return clip(labels[0], 80) if labels else ""

    def _term(self, iri) -> URIRef:
        """A full IRI or prefixed name that occurs in the ontology; ToolError otherwise."""
        text = _text(iri, "iri").strip().strip("<>")
        g = self.graph
        if ":" in text and not re.match(r"^[a-z][a-z0-9+.-]*://", text, re.I):
            try:
                text = str(g.namespace_manager.expand_curie(text))
            except ValueError:
                pass
        term = URIRef(text)
        if (term, None, None) not in g and (None, None, term) not in g:
            raise ToolError(f"{clip(text, 100)!r} is not in the ontology; list IRIs with ontology_classes() or "
                            "ontology_properties(), or use a full IRI")
        return term

    def _store_rows(self, result: QueryResult) -> dict:
        """Serialize query rows as JSON lines into a "results" blob; return its handle and row count."""
        columns, lines = list(result.columns), []
        for values in result.rows:
            self.vocabulary.update(text for kind, text in filter(None, values) if kind == "uri")
            lines.append(dumps({c: _term_text(v) for c, v in zip(columns, values, strict=False) if v is not None}))
        text = "".join(line + "\n" for line in lines)
        ref = self.scratch.put(text, "results")
        starts, pos = [], 0
        for line in lines:
            starts.append(pos)
            pos += len(line) + 1
        self.results[ref.key] = starts + [pos]
        self._watch(ref.key)
        out = {"handle": ref.key, "rows": len(lines), "columns": columns[:MAX_LIST], "size": ref.size,
               "truncated": result.truncated}
        return {**out, "all_rows": [json.loads(line) for line in lines]} if self.uncapped else out

    def _used(self, id: str, content_ref: str | None = None, rank: int | None = None, score: float = 0.0) -> None:
        """Remember that the agent met memory item `id` (search rank and score; its content is a payload to watch)."""
        if id not in self.memory_ids_used:
            self.memory_ids_used.append(id)
            self.memory_usage[id] = (rank or len(self.memory_usage) + 1, float(score))
        if content_ref:
            self._watch(content_ref)

    def _content(self, key: str) -> str:
        """The whole payload behind an item's content_ref (A4 only), watched for leakage."""
        self._watch(key)
        return self.blobs.load(key)

    def _watch(self, key: str) -> None:
        """Add the payload behind `key` to the payloads leakage is measured for."""
        if all(r.key != key for r in self.payloads):
            self.payloads.append(self._store(key).ref(key))

    def _store(self, key: str) -> BlobStore:
        """The blob store holding `key`: this run's scratch store for query results, else the main one."""
        return self.scratch if key in self.results else self.blobs

    def load(self, ref: Ref) -> str:
        """A watched payload in full, for measuring leakage (library use only; never hand it to the model)."""
        return self._store(ref.key).load(ref)

    def _left(self) -> int:
        """Characters left in the read budget."""
        return max(0, self.budget.total_chars - self.budget.spent)

    def _budget_info(self) -> dict:
        """The read budget as the model should know it."""
        return {"max_read": min(self.budget.max_read, self.blobs.max_read), "budget_left": self._left(),
                "reads_per_handle": self.budget.reads_per_handle}


def tools(memory=None, prompt: str | Ref | None = None, ontology: str | Path | Graph | None = None,
          budget: ReadBudget | None = None) -> list[OwlTool]:
    """The capped tools (OwlTool objects) for dspy.RLM(sig, tools=...) over a memory, a hidden prompt, an ontology."""
    return Toolbox(memory, prompt, ontology, budget).functions()


class OwlTool(dspy.Tool):
    """A dspy.Tool over one Toolbox method: positional or keyword arguments, bad calls become "[Error] …" strings.

    dspy.Tool.__call__ takes keywords only; this binds positional arguments to the method's parameter names,
    runs dspy's own argument check, then the method under the toolbox's lock, caps and call log. It keeps the
    method's name, docstring and signature, so dspy.RLM's prompt, Deno's sandbox stubs (which bind positional
    arguments) and inspect.signature all show them.
    """

    _box: Toolbox = PrivateAttr()

    def __init__(self, method: Callable, box: Toolbox):
        """Wrap `method` (a bound Toolbox method) so calls go through `box`'s guard, caps and log."""
        super().__init__(method)
        self._box = box
        for attr, value in (("__name__", self.name), ("__qualname__", self.name), ("__doc__", self.desc),
                            ("__wrapped__", method), ("__annotations__", dict(method.__annotations__))):
            object.__setattr__(self, attr, value)  # plain-function metadata for Python callers

    @with_callbacks  # dspy's on_tool_start / on_tool_end, as dspy.Tool.__call__ has
    def __call__(self, *args, **kwargs):
        """Call the tool by position or by name; always returns a capped value or an "[Error] …" string."""
        return self._box._call(self, args, kwargs)

    async def acall(self, *args, **kwargs):
        """The async form dspy's ReAct and sub-agents use; the tools themselves are synchronous."""
        return self(*args, **kwargs)

    def __deepcopy__(self, memo):
        """The same tool: a copied program must share its run's toolbox, handles and read budget."""
        return self

    def __repr__(self):
        """The tool as dspy shows it."""
        return f"OwlTool(name={self.name}, args={list(self.args)})"


def _bind(fn: Callable, args, kwargs) -> inspect.BoundArguments:
    """Bind a call to fn's signature; ToolError names the expected signature (values never echoed)."""
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as e:
        raise ToolError(f"bad arguments ({e}); call it as {fn.__name__}{_signature(fn)}") from None
    bound.apply_defaults()
    return bound


def _signature(fn) -> str:
    """The parameter list of a tool, as the model should call it: (start: int = 0, length: int = 512)."""
    def show(p):
        ann = p.annotation if isinstance(p.annotation, str) else getattr(p.annotation, "__name__", p.annotation)
        text = p.name if p.annotation is inspect.Parameter.empty else f"{p.name}: {ann}"
        return text if p.default is inspect.Parameter.empty else f"{text} = {p.default!r}"

    return "(" + ", ".join(show(p) for p in inspect.signature(fn).parameters.values()) + ")"


def _argument_problem(e: Exception, schema: dict) -> str:
    """What was wrong with the arguments, without echoing their values."""
    m = re.search(r"Arg (\w+) is invalid", str(e))
    if m:
        name = m.group(1)
        want = _KIND.get((schema.get(name) or {}).get("type"), "of the type shown")
        return f"argument {name!r} has the wrong type: {name} must be {want}"
    return f"bad arguments ({type(e).__name__}); pass the arguments shown, by position or by name"


def _int(value, name: str) -> int:
    """An integer argument (numeric strings accepted, bools and None refused); ToolError otherwise."""
    if isinstance(value, bool) or value is None:
        raise ToolError(f"{name} must be an integer")
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise ToolError(f"{name} must be an integer, e.g. {name}=0") from None


def _text(value, name: str) -> str:
    """A string argument of at most MAX_ARG characters; ToolError otherwise."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ToolError(f"{name} must be a string")
    if len(value) > MAX_ARG:
        raise ToolError(f"{name} is {len(value)} characters; the limit is {MAX_ARG}")
    return value


def _limit(value) -> int:
    """A listing limit clamped to 1..MAX_LIST."""
    return max(1, min(_int(value, "limit"), MAX_LIST))


def _term_text(value: tuple[str, str]) -> str:
    """A (kind, text) term from a query worker as a short string: IRI, _:bnode, or the literal's lexical form."""
    kind, text = value
    return f"_:{text}" if kind == "bnode" else text


def _whole_rows(text: str) -> list[dict]:
    """The complete JSON lines at the start of a window (a cut last line is dropped)."""
    lines = text.split("\n")
    return [json.loads(line) for line in lines[:-1] if line]


def _fit(value):
    """The value if its serialized form fits MAX_RETURN; else trimmed (text, then longest lists) and flagged."""
    if len(dumps(value)) <= MAX_RETURN:
        return value
    if isinstance(value, dict):
        value = dict(value)
        while len(dumps(value)) > MAX_RETURN and _shrink(value):
            value["truncated"] = True
        if len(dumps(value)) <= MAX_RETURN:
            return value
    raise CapExceeded(f"the result is larger than {MAX_RETURN} characters; ask for fewer items (smaller limit or n)")


def _shrink(value: dict) -> bool:
    """Cut the window text or the longest list of a dict once; False when nothing is left to cut."""
    if isinstance(value.get("text"), str) and value["text"]:
        value["text"] = value["text"][: len(value["text"]) * 3 // 4]
        value["end"] = value.get("start", 0) + len(value["text"])
        return True
    lists = [(len(v), k) for k, v in value.items() if isinstance(v, list) and v]
    if lists:
        _, key = max(lists)
        value[key] = value[key][: len(value[key]) * 3 // 4]
        return True
    strings = [(len(v), k) for k, v in value.items() if isinstance(v, str) and len(v) > 40]
    if strings:
        _, key = max(strings)
        value[key] = clip(value[key], len(value[key]) // 2)
        return True
    return False


def _strings(value):
    """Every string inside a JSON-compatible value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _describe_args(args: tuple, kwargs: dict) -> dict:
    """Arguments for the trajectory: short values as they are, long strings clipped with their length."""
    def show(v):
        if isinstance(v, str) and len(v) > 120:
            return {"clipped": clip(v, 120), "chars": len(v)}
        return v if isinstance(v, int | float | bool | type(None)) or isinstance(v, str) else clip(dumps(v), 120)

    return {"positional": [show(a) for a in args], "keyword": {str(k): show(v) for k, v in kwargs.items()}}


def _scrub(message: str, args: tuple, kwargs: dict, k: int = 16) -> str:
    """An error message with every run of 16+ characters copied from a string argument replaced by <argument>."""
    from .leakage import covered_segments, kgrams

    for a in [*args, *kwargs.values()]:
        if isinstance(a, str) and len(a) >= k:
            for segment in sorted(set(covered_segments(message, kgrams(a, k), k)), key=len, reverse=True):
                message = message.replace(segment, "<argument>")
    return message


def _message(e: Exception) -> str:
    """An exception's message without KeyError's quoting."""
    return str(e.args[0]) if isinstance(e, KeyError) and e.args and not isinstance(e, UnknownItem) else str(e)
