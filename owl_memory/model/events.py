"""A run's trajectory as typed events: one frozen dataclass per kind of line, each with its JSON form.

A trajectory file (agent/trajectory.py) holds one event per line, checked against schemas/trajectory.schema.json.
`to_dict()` is the line's object, keys in the order trajectory files have always had ("event", "run_id", "seq",
"ts", then the kind's fields); `event_from_dict` reads a line back as its kind. `run_id`, `seq` and `ts` are stamped
by the trajectory that writes an event (Trajectory.write): an event a tool has just emitted carries the defaults.
Sizes and handles only: no event holds payload text (an agent_query holds the query the model wrote, as an iteration
holds its code).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .handles import Ref
from .runs import AnswerQuery, RunMetrics


@dataclass(frozen=True)
class Event(ABC):
    """What every trajectory line has: its run, its place in the file and when it was written (Unix seconds)."""

    kind: ClassVar[str] = ""
    run_id: str = field(default="", kw_only=True)
    seq: int = field(default=0, kw_only=True)
    ts: float = field(default=0.0, kw_only=True)

    def to_dict(self) -> dict[str, Any]:
        """The trajectory line: {"event", "run_id", "seq", "ts", ...the kind's fields}."""
        return {"event": self.kind, "run_id": self.run_id, "seq": self.seq, "ts": self.ts, **self.own_fields()}

    @abstractmethod
    def own_fields(self) -> dict[str, Any]:
        """The kind's own fields as JSON (each kind says which)."""

    @classmethod
    @abstractmethod
    def read(cls, d: dict[str, Any]) -> Event:
        """The event of one line of this kind (each kind reads its own fields)."""


@dataclass(frozen=True)
class OntologyBrief:
    """What a run is told about its ontology up front: its IRIs (at most 3) and its size, never its text."""

    iris: tuple[str, ...]
    triples: int

    def to_dict(self) -> dict[str, Any]:
        """JSON form: {ontology: [IRI, ...], triples}."""
        return {"ontology": list(self.iris), "triples": self.triples}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> OntologyBrief:
        """The brief of its JSON form."""
        return cls(tuple(d.get("ontology", ())), int(d.get("triples", 0)))


@dataclass(frozen=True)
class LayerBrief:
    """One context layer as a trajectory records it: its name, its length, the bound it was packed to and the
    lines it dropped (never its text)."""

    name: str
    chars: int
    bound: int
    dropped: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON form: {name, chars, bound, dropped}."""
        return {"name": self.name, "chars": self.chars, "bound": self.bound, "dropped": self.dropped}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LayerBrief:
        """The brief of its JSON form."""
        return cls(d["name"], d["chars"], d["bound"], d.get("dropped", 0))


@dataclass(frozen=True)
class RunSettings:
    """The configuration a run_start line records: condition, LMs, limits, interpreter, read budget, A1's quota,
    layer budgets, the tools offered, the layers packed and the REPL output cap per iteration."""

    condition: str
    lm: str
    max_iters: int
    max_llm_calls: int
    interpreter: str
    sub_lm: str | None = None
    max_tokens: int | None = None
    timeout: float | None = None
    max_read: int | None = None
    read_budget: int | None = None
    task_id: str | None = None
    k: int | str | None = None
    budgets: dict[str, int] = field(default_factory=dict)
    tools: tuple[str, ...] = ()
    layers: tuple[LayerBrief, ...] = ()
    max_output_chars: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form, keys in the order trajectories have them (max_output_chars when recorded: older lines lack it)."""
        return {"condition": self.condition, "lm": self.lm, "sub_lm": self.sub_lm, "max_iters": self.max_iters,
                "max_llm_calls": self.max_llm_calls, "max_tokens": self.max_tokens, "timeout": self.timeout,
                "interpreter": self.interpreter, "max_read": self.max_read, "read_budget": self.read_budget,
                "task_id": self.task_id, "k": self.k, "budgets": dict(self.budgets), "tools": list(self.tools),
                "layers": [layer.to_dict() for layer in self.layers],
                **_when("max_output_chars", self.max_output_chars)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunSettings:
        """The settings of their JSON form (keys a line may lack take their defaults)."""
        return cls(d["condition"], d["lm"], d["max_iters"], d["max_llm_calls"], d["interpreter"], d.get("sub_lm"),
                   d.get("max_tokens"), d.get("timeout"), d.get("max_read"), d.get("read_budget"), d.get("task_id"),
                   d.get("k"), dict(d.get("budgets") or {}), tuple(d.get("tools", ())),
                   tuple(LayerBrief.from_dict(x) for x in d.get("layers", ())), d.get("max_output_chars"))


@dataclass(frozen=True)
class RunStart(Event):
    """The first line: the task, the prompt's handle, the ontology's brief, the items injected and filtered out,
    and the run's settings."""

    kind: ClassVar[str] = "run_start"
    task: str
    prompt: Ref | None
    ontology: OntologyBrief | None
    memory_ids_injected: tuple[str, ...]
    memory_ids_filtered: tuple[str, ...]
    config: RunSettings

    def own_fields(self) -> dict[str, Any]:
        """task, prompt, ontology, memory_ids_injected, memory_ids_filtered, config."""
        return {"task": self.task, "prompt": self.prompt.to_dict() if self.prompt else None,
                "ontology": self.ontology.to_dict() if self.ontology else None,
                "memory_ids_injected": list(self.memory_ids_injected),
                "memory_ids_filtered": list(self.memory_ids_filtered), "config": self.config.to_dict()}

    @classmethod
    def read(cls, d: dict[str, Any]) -> RunStart:
        """The event of its line."""
        prompt, ontology = d["prompt"], d["ontology"]
        return cls(d["task"], Ref.from_dict(prompt) if prompt else None,
                   OntologyBrief.from_dict(ontology) if ontology else None, tuple(d["memory_ids_injected"]),
                   tuple(d.get("memory_ids_filtered", ())), RunSettings.from_dict(d["config"]), **_header(d))


@dataclass(frozen=True)
class Iteration(Event):
    """One RLM step: the model's reasoning and code, the output as the model saw it, and the output's full length."""

    kind: ClassVar[str] = "iteration"
    iteration: int
    reasoning: str
    code: str
    output: str
    output_chars: int

    def own_fields(self) -> dict[str, Any]:
        """iteration, reasoning, code, output, output_chars."""
        return {"iteration": self.iteration, "reasoning": self.reasoning, "code": self.code, "output": self.output,
                "output_chars": self.output_chars}

    @classmethod
    def read(cls, d: dict[str, Any]) -> Iteration:
        """The event of its line."""
        return cls(d["iteration"], d["reasoning"], d["code"], d["output"], d["output_chars"], **_header(d))


@dataclass(frozen=True)
class CallArgs:
    """A tool call's arguments as a trajectory shows them: short values as they are, long ones clipped."""

    positional: tuple[Any, ...] = ()
    keyword: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON form: {positional: [...], keyword: {...}}."""
        return {"positional": list(self.positional), "keyword": dict(self.keyword)}


@dataclass(frozen=True)
class ToolCall(Event):
    """A tool was called (before it runs): its name, its arguments and the RLM iteration it was called in."""

    kind: ClassVar[str] = "tool_call"
    tool: str
    args: CallArgs
    iteration: int | None = None

    def own_fields(self) -> dict[str, Any]:
        """tool, args, iteration (when known)."""
        return {"tool": self.tool, "args": self.args.to_dict(), **_when("iteration", self.iteration)}

    @classmethod
    def read(cls, d: dict[str, Any]) -> ToolCall:
        """The event of its line."""
        args = CallArgs(tuple(d["args"]["positional"]), dict(d["args"]["keyword"]))
        return cls(d["tool"], args, d.get("iteration"), **_header(d))


@dataclass(frozen=True)
class ToolResult(Event):
    """What a tool returned, as sizes and handles: its serialized length, whether it was an "[Error] …" (then its
    message, at most 300 characters), the handles it named and the RLM iteration."""

    kind: ClassVar[str] = "tool_result"
    tool: str
    chars: int
    error: bool
    handles: tuple[str, ...]
    message: str | None = None
    iteration: int | None = None

    def own_fields(self) -> dict[str, Any]:
        """tool, chars, error, handles, message, iteration (when known)."""
        return {"tool": self.tool, "chars": self.chars, "error": self.error, "handles": list(self.handles),
                "message": self.message, **_when("iteration", self.iteration)}

    @classmethod
    def read(cls, d: dict[str, Any]) -> ToolResult:
        """The event of its line."""
        return cls(d["tool"], d["chars"], d["error"], tuple(d["handles"]), d.get("message"), d.get("iteration"),
                   **_header(d))


@dataclass(frozen=True)
class AgentQuery(Event):
    """One SPARQL query the agent ran through a query tool (ontology_query, endpoint_query): the tool, where it ran
    (`source`: "ontology" or the endpoint URL), the query as the tool received it (the model's own text, built in its
    code) and its sha256, and what came back: the row count and results handle of a SELECT, ASK's answer, or the
    class of the error (`error`, e.g. "refused", "timeout", "http-400") with its message (at most 300 characters)."""

    kind: ClassVar[str] = "agent_query"
    tool: str
    source: str
    sparql: str
    sha: str
    rows: int | None = None
    ask: bool | None = None
    handle: str | None = None
    error: str | None = None
    message: str | None = None
    iteration: int | None = None

    def own_fields(self) -> dict[str, Any]:
        """tool, source, sparql, sha, rows, ask, handle, error, message, iteration (when known)."""
        return {"tool": self.tool, "source": self.source, "sparql": self.sparql, "sha": self.sha, "rows": self.rows,
                "ask": self.ask, "handle": self.handle, "error": self.error, "message": self.message,
                **_when("iteration", self.iteration)}

    def as_answer(self) -> AnswerQuery:
        """The query as a run's result and records name the SPARQL behind an answer."""
        return AnswerQuery(self.tool, self.source, self.sparql, self.sha, self.rows, self.error)

    @classmethod
    def read(cls, d: dict[str, Any]) -> AgentQuery:
        """The event of its line."""
        return cls(d["tool"], d["source"], d["sparql"], d["sha"], d.get("rows"), d.get("ask"), d.get("handle"),
                   d.get("error"), d.get("message"), d.get("iteration"), **_header(d))


@dataclass(frozen=True)
class Construction(Event):
    """A construction tool's step: the tool and its return without the CQ text or report (what the model got)."""

    kind: ClassVar[str] = "construction"
    tool: str
    result: dict[str, Any]

    def own_fields(self) -> dict[str, Any]:
        """tool, result."""
        return {"tool": self.tool, "result": dict(self.result)}

    @classmethod
    def read(cls, d: dict[str, Any]) -> Construction:
        """The event of its line."""
        return cls(d["tool"], dict(d["result"]), **_header(d))


@dataclass(frozen=True)
class ConstraintViolation(Event):
    """An agent query broke a Constraint item that applies to the run: the query tool, the item's id and what the
    agent was told."""

    kind: ClassVar[str] = "constraint_violation"
    tool: str
    constraint: str
    message: str

    def own_fields(self) -> dict[str, Any]:
        """tool, constraint, message."""
        return {"tool": self.tool, "constraint": self.constraint, "message": self.message}

    @classmethod
    def read(cls, d: dict[str, Any]) -> ConstraintViolation:
        """The event of its line."""
        return cls(d["tool"], d["constraint"], d["message"], **_header(d))


@dataclass(frozen=True)
class MemoryNote(Event):
    """The agent proposed a distilled field or a refinement of a memory item (memory_note): the item's id and the
    note (at most NOTE_CHARS). The learning loop decides what becomes of it (learning/notes.py)."""

    kind: ClassVar[str] = "memory_note"
    item: str
    note: str

    def own_fields(self) -> dict[str, Any]:
        """item, note."""
        return {"item": self.item, "note": self.note}

    @classmethod
    def read(cls, d: dict[str, Any]) -> MemoryNote:
        """The event of its line."""
        return cls(d["item"], d["note"], **_header(d))


@dataclass(frozen=True)
class RunComplete(Event):
    """The last line: how the run ended (ok, extracted or error, with the error), its answer, its metrics and the
    items it used. The line repeats the metrics' iterations, LM calls and tokens at its top level."""

    kind: ClassVar[str] = "run_complete"
    status: str
    answer: str | None
    metrics: RunMetrics
    memory_ids_used: tuple[str, ...] = ()
    error: str | None = None

    def own_fields(self) -> dict[str, Any]:
        """status, error (when the run failed), answer, iterations, lm_calls, prompt_tokens, completion_tokens,
        metrics, memory_ids_used."""
        m = self.metrics
        return {"status": self.status, **_when("error", self.error), "answer": self.answer,
                "iterations": m.iterations, "lm_calls": m.lm_calls, "prompt_tokens": m.prompt_tokens,
                "completion_tokens": m.completion_tokens, "metrics": m.to_dict(),
                "memory_ids_used": list(self.memory_ids_used)}

    @classmethod
    def read(cls, d: dict[str, Any]) -> RunComplete:
        """The event of its line."""
        return cls(d["status"], d["answer"], RunMetrics.from_dict(d["metrics"]), tuple(d.get("memory_ids_used", ())),
                   d.get("error"), **_header(d))


EVENTS: dict[str, type[Event]] = {cls.kind: cls for cls in (RunStart, Iteration, ToolCall, ToolResult, AgentQuery,
                                                    Construction, ConstraintViolation, MemoryNote, RunComplete)}


def event_from_dict(d: dict[str, Any]) -> Event:
    """The typed event of one trajectory line (a dict that passed the trajectory schema)."""
    return EVENTS[d["event"]].read(d)


def _header(d: dict[str, Any]) -> dict[str, Any]:
    """The stamp every line carries: run_id, seq, ts."""
    return {"run_id": d["run_id"], "seq": d["seq"], "ts": d["ts"]}


def _when(name: str, value: Any) -> dict[str, Any]:
    """{name: value} when the value is given, {} when it is None (an optional key the line leaves out)."""
    return {} if value is None else {name: value}
