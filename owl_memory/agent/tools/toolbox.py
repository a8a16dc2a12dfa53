"""The state behind one run's tools (handles, read budget, caps, call log) and the guard every call goes through.

Tools come in families, one module each (prompt, memory, ontology, results): a family is a ToolFamily subclass
registered with @family; its `names` are the tools it adds, listed in `order`. Adding a family is one new module
imported by agent/tools/__init__.py.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import PrivateAttr
from rdflib import Graph

from ...adapters.dspy import dspy, validate_tool_args, with_callbacks
from ...errors import OwlMemoryError, ToolError
from ...model import Event, MemoryAccess, QueryConstraint, Ref, ToolCall, ToolResult, ToolStats
from ...rdfio import load_graph
from ...store import BlobStore, PayloadStore, ReadBudget
from ..query_worker import QueryLimits, QueryWorker
from .caps import (
    LARGE_RETURN,
    MAX_CALLS,
    argument_problem,
    bind,
    clip,
    describe_args,
    dumps,
    error_message,
    fit,
    is_error,
    scrub,
    signature,
    strings,
)

if TYPE_CHECKING:
    from ...store import Memory
    from ..endpoint_profiles import EndpointSession

FAMILIES: list[type[ToolFamily]] = []  # filled by @family, kept in `order`
DEFAULT_ACCESS = MemoryAccess.of("A2")  # memory through capped tools: what a toolbox grants unless told otherwise


class ToolFamily:
    """A group of tools over one kind of handle; its public methods named in `names` are the tools.

    A family's methods read and change the run's state through `self.box` (the Toolbox).
    """

    order = 100  # where the family's tools are listed (prompt 10, memory 20, ontology 30, results 40)
    names: tuple[str, ...] = ()

    def __init__(self, box: Toolbox):
        """A family bound to one run's toolbox."""
        self.box = box

    def offered(self) -> bool:
        """Whether this run gets the family's tools (all families: yes, unless they say otherwise)."""
        return True


def family(cls: type[ToolFamily]) -> type[ToolFamily]:
    """Register a ToolFamily subclass (class decorator); families are listed by their `order`."""
    FAMILIES.append(cls)
    FAMILIES.sort(key=lambda f: f.order)
    return cls


class Toolbox:
    """The state behind one run's tools: handles, read budget, caps and a log of calls.

    Args:
        memory: a Memory (its blob store holds the payloads), or None for a run without memory tools.
        prompt: the prompt text (stored as a "prompt" blob) or a Ref to one; never shown whole.
        ontology: a path, Turtle text or rdflib Graph loaded with load_graph.
        budget: the run's ReadBudget (a fresh default one when None).
        access: what the run's condition grants (model.MemoryAccess): memory tools or not, and A4's uncapped
            returns (whole item content, all query rows inline; leakage is still measured). Default: A2.
        observer: called with each event the tools emit (model/events.py: tool_call, tool_result, constraint and
            construction events; sizes and handles, no payload), e.g. a Trajectory's write.
        blobs: the blob store to use when there is no memory (an in-memory one by default).
        max_calls: tool calls the run may make.
        query_limits: wall time, memory and rows of each agent SPARQL query (QueryLimits() by default:
            10 s, 512 MB, 10,000 rows); a query runs in a worker process killed when it passes a limit.
    """

    def __init__(self, memory: Memory | None = None, prompt: str | Ref | None = None,
                 ontology: str | Path | Graph | None = None, budget: ReadBudget | None = None, *,
                 access: MemoryAccess = DEFAULT_ACCESS, observer: Callable[[Event], object] | None = None,
                 blobs: PayloadStore | None = None, max_calls: int = MAX_CALLS,
                 query_limits: QueryLimits | None = None):
        self.memory, self.access = memory, access
        self.blobs: PayloadStore = memory.blobs if memory is not None else (blobs or BlobStore(":memory:"))
        self.scratch = BlobStore(":memory:", max_read=self.blobs.max_read)  # this run's query results
        self.budget = budget or ReadBudget(max_read=self.blobs.max_read)
        self.prompt = self.blobs.put(prompt, "prompt") if isinstance(prompt, str) else prompt
        self.graph = load_graph(ontology) if ontology is not None else None
        self.observer, self.max_calls = observer, max_calls
        self.query_limits = query_limits or QueryLimits()
        self.workers: dict[str, QueryWorker] = {}  # "ontology" / "memory" -> its query worker, started on first use
        self._lock = threading.RLock()  # interpreters call tools from worker threads; one call at a time
        self.results: dict[str, list[int]] = {}  # results handle -> line start offsets (plus the end)
        self.scratch_keys: set[str] = set()  # other payloads this run keeps in its scratch store (A5's files)
        self.payloads: list[Ref] = [self.prompt] if self.prompt is not None else []
        self.memory_ids_used: list[str] = []
        self.memory_usage: dict[str, tuple[int, float]] = {}  # id -> (rank, score) where the agent first met it
        self.vocabulary: set[str] = set()  # IRIs and namespaces the tools show: vocabulary, not payload
        self.stats = ToolStats()
        # (item id, constraint) of the Constraint items each query is checked against (agent/constraints.py)
        self.constraints: tuple[tuple[str, QueryConstraint], ...] = ()
        self.endpoints: EndpointSession | None = None  # the run's SPARQL endpoints (tools/endpoint.py), when granted
        self.families = [cls(self) for cls in FAMILIES]

    def functions(self) -> list[OwlTool]:
        """The tools as OwlTool objects (dspy.Tool), ready for dspy.RLM(sig, tools=...) or direct calls."""
        return [OwlTool(getattr(f, name), self) for f in self.families if f.offered() for name in f.names]

    def tool_names(self) -> tuple[str, ...]:
        """The names of the tools `functions` offers, in order (without building them: dspy reads each signature)."""
        return tuple(name for f in self.families if f.offered() for name in f.names)

    def __getattr__(self, name: str) -> Any:
        """A tool's own method by name (box.prompt_window): no guard, caps or log, for library code and tests."""
        for f in self.__dict__.get("families", ()):
            if name in f.names:
                return getattr(f, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # ---- the guard ------------------------------------------------------------------------------------------

    def call(self, tool: OwlTool, args: tuple, kwargs: dict) -> Any:
        """Run one tool call: bind and check arguments, enforce caps, turn recoverable failures into "[Error] …"."""
        with self._lock:  # interpreters call tools from worker threads; one call at a time
            self.stats = self.stats.called()
            bound: inspect.BoundArguments | None = None
            problem: ToolError | None = None
            try:
                bound = bind(tool.func, args, kwargs)
                args, kwargs = (), dict(bound.arguments)  # the trajectory shows every argument by name
            except ToolError as e:
                problem = e
            self.emit(ToolCall(tool.name, describe_args(args, kwargs)))
            value = self._guarded(tool, bound, problem, args, kwargs)
            self._record(tool.name, value)
            return value

    def _guarded(self, tool: OwlTool, bound: inspect.BoundArguments | None, problem: ToolError | None, args: tuple,
                 kwargs: dict) -> Any:
        """The tool's capped return, or an "[Error] …" string that never echoes an argument value."""
        name = tool.name
        if problem is None and self.stats.tool_calls > self.max_calls:
            problem = ToolError(f"this run's limit of {self.max_calls} tool calls is reached; SUBMIT what you have")
        if problem is not None:
            return f"[Error] {name}: {clip(scrub(str(problem), args, kwargs), 300)}"
        assert bound is not None  # call() binds or has the problem
        try:
            parsed = validate_tool_args(tool, bound.arguments)  # dspy.Tool's JSON-schema and pydantic check
        except ValueError as e:  # its messages echo argument values; say what to pass instead
            return f"[Error] {name}{signature(tool.func)}: {argument_problem(e, tool.args)}"
        try:
            value = tool.func(**parsed)
            return value if self.access.uncapped else fit(value)
        except (OwlMemoryError, ValueError, KeyError) as e:
            return f"[Error] {name}: {clip(scrub(error_message(e), args, kwargs), 300)}"

    def _record(self, name: str, value: Any) -> None:
        """Update the counters and emit the tool_result event for one return."""
        size = len(dumps(value))
        message = value[:300] if is_error(value) else None
        window = len(value["text"]) if isinstance(value, dict) and isinstance(value.get("text"), str) else 0
        self.stats = self.stats.returned(size, error=message is not None, large=size > LARGE_RETURN, window=window)
        handles = sorted({v for v in strings(value) if v.startswith("sha256:")})
        self.emit(ToolResult(name, size, message is not None, tuple(handles[:20]), message))

    def emit(self, event: Event) -> None:
        """Pass an event (this guard's, or a tool family's such as a constraint violation) to the observer, if any."""
        if self.observer is not None:
            self.observer(event)

    # ---- state the families share ---------------------------------------------------------------------------

    def used(self, id: str, content_ref: str | None = None, rank: int | None = None, score: float = 0.0) -> None:
        """Remember that the agent met memory item `id` (search rank and score; its content is a payload to watch)."""
        if id not in self.memory_ids_used:
            self.memory_ids_used.append(id)
            self.memory_usage[id] = (rank or len(self.memory_usage) + 1, float(score))
        if content_ref:
            self.watch(content_ref)

    def watch(self, key: str) -> None:
        """Add the payload behind `key` to the payloads leakage is measured for."""
        if all(r.key != key for r in self.payloads):
            self.payloads.append(self.store(key).ref(key))

    def store(self, key: str) -> PayloadStore:
        """The blob store holding `key`: this run's scratch store for query results and files, else the main one."""
        return self.scratch if key in self.results or key in self.scratch_keys else self.blobs

    def load(self, ref: Ref) -> str:
        """A watched payload in full, for measuring leakage (library use only; never hand it to the model)."""
        return self.store(ref.key).load(ref)

    def require_memory(self) -> Memory:
        """The run's memory, or a ToolError saying this run has none."""
        if self.memory is None:
            raise ToolError("this run has no memory; work from the task and the other tools")
        return self.memory

    def left(self) -> int:
        """Characters left in the read budget."""
        return max(0, self.budget.total_chars - self.budget.spent)

    def budget_info(self) -> dict[str, int]:
        """The read budget as the model should know it."""
        return {"max_read": min(self.budget.max_read, self.blobs.max_read), "budget_left": self.left(),
                "reads_per_handle": self.budget.reads_per_handle}


def tools(memory: Memory | None = None, prompt: str | Ref | None = None, ontology: str | Path | Graph | None = None,
          budget: ReadBudget | None = None) -> list[OwlTool]:
    """The capped tools (OwlTool objects) for dspy.RLM(sig, tools=...) over a memory, a hidden prompt, an ontology."""
    return Toolbox(memory, prompt, ontology, budget).functions()


class OwlTool(dspy.Tool):
    """A dspy.Tool over one tool method: positional or keyword arguments, bad calls become "[Error] …" strings.

    dspy.Tool.__call__ takes keywords only; this binds positional arguments to the method's parameter names,
    runs dspy's own argument check, then the method under the toolbox's lock, caps and call log. It keeps the
    method's name, docstring and signature, so dspy.RLM's prompt, Deno's sandbox stubs (which bind positional
    arguments) and inspect.signature all show them.
    """

    _box: Toolbox = PrivateAttr()

    def __init__(self, method: Callable, box: Toolbox):
        """Wrap `method` (a bound tool method) so calls go through `box`'s guard, caps and log."""
        super().__init__(method)
        self._box = box
        for attr, value in (("__name__", self.name), ("__qualname__", self.name), ("__doc__", self.desc),
                            ("__wrapped__", method), ("__annotations__", dict(method.__annotations__))):
            object.__setattr__(self, attr, value)  # plain-function metadata for Python callers

    @with_callbacks  # dspy's on_tool_start / on_tool_end, as dspy.Tool.__call__ has
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the tool by position or by name; always returns a capped value or an "[Error] …" string."""
        return self._box.call(self, args, kwargs)

    async def acall(self, *args: Any, **kwargs: Any) -> Any:
        """The async form dspy's ReAct and sub-agents use; the tools themselves are synchronous."""
        return self(*args, **kwargs)

    def __deepcopy__(self, memo: dict[int, object]) -> OwlTool:
        """The same tool: a copied program must share its run's toolbox, handles and read budget."""
        return self

    def __repr__(self) -> str:
        """The tool as dspy shows it."""
        return f"OwlTool(name={self.name}, args={list(self.args)})"
