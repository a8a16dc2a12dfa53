"""A run as typed values: what a condition grants (`MemoryAccess`), what a run is given (`RunConfig`) and what it
produced (`RunResult` with `RunMetrics` and `MemoryUse` rows)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .handles import sha256

HINT_CHARS = 300  # A3's packed hint
LAYERS = ("L0", "L1", "L3")  # context layers a run may give the model (agent/context.py computes them)
BUDGETED = (*LAYERS, "L2")  # what a layer budget may bound: the layers, and L2 (A1's injected text)
MAX_BUDGET = 1000  # dspy.RLM previews each input variable up to 1,000 characters: a bounded input is seen whole
POLARITIES = ("success", "failure", "seed")  # A1's quota: items from successes, from failures, and seed items


@dataclass(frozen=True)
class Quota:
    """How many retrieved items condition A1 injects: the top `success`, `failure` and `seed` items (by default
    2 + 1 + 1), or with `overall` the top `overall` items whatever their polarity (ReasoningBank's k).

    Parsed from an integer (`overall`), "2,1,1" / "2+1+1" (success, failure, seed), a mapping of those names, or None
    (the default quota); ConfigError otherwise.
    """

    success: int = 2
    failure: int = 1
    seed: int = 1
    overall: int | None = None

    @classmethod
    def parse(cls, k) -> Quota:
        """The quota `k` says (see the class); ConfigError naming the accepted forms."""
        if k is None or isinstance(k, cls):
            return k or cls()
        if isinstance(k, str) and k.strip().isdigit():
            k = int(k)
        if isinstance(k, int) and not isinstance(k, bool):
            if k < 1:
                raise ConfigError(f"k (items A1 injects) must be an integer >= 1, got {k!r}")
            return cls(overall=k)
        values = list(k.values()) if isinstance(k, dict) else str(k).replace("+", ",").split(",")
        names = list(k) if isinstance(k, dict) else list(POLARITIES[:len(values)])
        try:
            counts = {n: int(str(v).strip()) for n, v in zip(names, values, strict=True)}
        except ValueError:
            counts = {}
        if not counts or set(counts) - set(POLARITIES) or min(counts.values()) < 0 or not sum(counts.values()):
            raise ConfigError(f"k (items A1 injects) must be an integer >= 1 (the top k items) or success,failure,seed "
                              f"counts such as 2,1,1; got {k!r}")
        return cls(**{p: counts.get(p, 0) for p in POLARITIES})

    @property
    def total(self) -> int:
        """Items injected at most."""
        return self.overall if self.overall is not None else self.success + self.failure + self.seed

    def to_json(self) -> int | str:
        """The overall count as an integer, else "success+failure+seed" (parse() reads both back)."""
        return self.overall if self.overall is not None else f"{self.success}+{self.failure}+{self.seed}"


@dataclass(frozen=True)
class MemoryAccess:
    """What one ablation condition (A0-A4, docs/ablations.md) lets a run do with memory; derived once from the
    condition name (agent/conditions.py lists the names and their help for the CLI, which must start without rdflib).

    Args:
        condition: A0 ... A5.
        tools: the memory_* tools are offered.
        injected: items retrieved for the task up front at most (A1: its quota's total, A3: 1).
        quota: how A1 picks its items per polarity (agent/injection.py).
        text: those items go into the task as text (A1: title, summary, <= 3 bullets each).
        files: memory is offered as plain read-only files (files_* tools: list, read windows, grep) (A5).
        hint_chars: those items go into the task as one packed hint of at most this many characters (A3).
        uncapped: tool returns are not cut, items carry their whole content, queries return every row (A4).
        prompt_text: the hidden prompt's text is in the model's inputs (A4).
        layers_read_memory: context layers may read memory (L1's AntiPattern titles): every condition but A0.
    """

    condition: str
    tools: bool = False
    injected: int = 0
    quota: Quota = Quota()
    text: bool = False
    files: bool = False
    hint_chars: int = 0
    uncapped: bool = False
    prompt_text: bool = False
    layers_read_memory: bool = True

    @classmethod
    def of(cls, condition: str, k=None) -> MemoryAccess:
        """The access `condition` grants (k: A1's quota, see Quota.parse); ConfigError naming the conditions
        otherwise."""
        access = GRANTS.get(condition)
        if access is None:
            raise ConfigError(f"condition {condition!r} is not one of {', '.join(GRANTS)}")
        if access.text:
            quota = Quota.parse(k)
            return replace(access, injected=quota.total, quota=quota)  # A1 injects its quota of items
        return access


GRANTS = {"A0": MemoryAccess("A0", layers_read_memory=False), "A1": MemoryAccess("A1", text=True),
          "A2": MemoryAccess("A2", tools=True), "A3": MemoryAccess("A3", tools=True, injected=1, hint_chars=HINT_CHARS),
          "A4": MemoryAccess("A4", tools=True, uncapped=True, prompt_text=True),
          "A5": MemoryAccess("A5", files=True)}  # condition -> what it grants (A1: + its quota of items)


def parse_budgets(spec) -> dict[str, int]:
    """Layer budgets in characters from "L0=400,L2=800" or a mapping ({} for none); ConfigError naming the fix."""
    if not spec:
        return {}
    pairs = spec.items() if isinstance(spec, dict) else (p.partition("=")[::2] for p in str(spec).split(",") if p)
    out = {}
    for name, value in pairs:
        name = str(name).strip().upper()
        try:
            chars = int(str(value).strip())
        except ValueError:
            chars = 0
        if name not in BUDGETED or not 1 <= chars <= MAX_BUDGET:
            raise ConfigError(f"a layer budget is NAME=CHARACTERS with NAME one of {', '.join(BUDGETED)} (L2: A1's "
                              f"injected text) and CHARACTERS from 1 to {MAX_BUDGET} (the RLM's preview of an input: "
                              f"it is seen whole), e.g. L0=400,L2=800; got {name}={value}")
        out[name] = chars
    return out


def parse_layers(spec) -> tuple[str, ...]:
    """Layer names from "L0,L1", a list or None, in L0/L1/L3 order; ConfigError naming the valid ones."""
    if not spec:
        return ()
    names = [s.strip().upper() for s in (spec.split(",") if isinstance(spec, str) else spec) if str(s).strip()]
    bad = [n for n in names if n not in LAYERS]
    if bad:
        hint = " (L2, memory text in the prompt, is condition A1)" if "L2" in bad else ""
        raise ConfigError(f"unknown context layer(s) {', '.join(bad)}{hint}; use any of {', '.join(LAYERS)}")
    return tuple(n for n in LAYERS if n in names)


def check_output_cap(value: object) -> int:
    """A REPL output cap (characters the model sees of one iteration's output): a whole number >= 1, else
    ConfigError."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"max_output_chars (REPL output the model sees per iteration) must be a whole number >= 1, "
                          f"got {value!r}")
    return value


@dataclass(frozen=True)
class RunConfig:
    """Everything one agent run is given besides its task, memory, prompt and ontology; checked on construction.

    Args:
        lm: a DSPy LM, a model string ("openai/gpt-4o-mini", "scripted"), or None for $OWL_MEMORY_LM.
        api_base: an OpenAI-compatible server for a model string (Ollama, vLLM, llama.cpp).
        condition: the ablation condition A0 ... A5 (`access` is what it grants).
        k: which items condition A1 injects into the task (a Quota, or what Quota.parse reads: 3, "2,1,1"; default
            the top 2 success, 1 failure and 1 seed item).
        task_id, task_type: the curriculum task this run solves: A1 retrieves by its task type and never injects an
            item that a run of the same task id made (provenance says which).
        max_iters, max_llm_calls: the RLM's iteration and LM-call limits.
        max_output_chars: REPL output the model sees per iteration (characters; dspy.RLM cuts the rest).
        read_budget, reads_per_handle, max_read: the run's read allowance (store.blobs.ReadBudget: characters all
            reads may return, reads of one handle, characters of one read); None keeps ReadBudget's default.
        sandbox: run the model's code under bubblewrap (True, or an agent.sandbox.Sandbox); False: dspy's
            LocalInterpreter, which is not a sandbox.
        trajectory_dir: where the JSONL trajectory goes (default <memory>/runs, else ./.owl-memory/runs).
        layers: context layers given to the model ("L0,L1,L3" or names), the same in every condition.
        guide: what layer L3 summarizes: a guide file, or the guide's text.
        budgets: characters per layer ("L0=400,L2=800" or a mapping; L2 bounds A1's injected text).
        sub_lm: the LM (object or model string) serving the model's llm_query calls; None: the main LM.
        max_tokens, timeout: per LM call, the completion tokens asked at most and the seconds waited at most
            (model strings only: an LM object keeps its own settings).
        endpoints: the SPARQL endpoints the run's endpoint tools may contact ("URL", or "TARGET=URL" for a corpus
            target pointed at a mirror; model.endpoints.EndpointGrant); none: no endpoint tools.
    """

    lm: Any = None
    api_base: str | None = None
    condition: str = "A2"
    k: Any = None
    task_id: str | None = None
    task_type: str | None = None
    max_iters: int = 12
    max_llm_calls: int = 20
    max_output_chars: int = 4_000
    read_budget: int | None = None
    reads_per_handle: int | None = None
    max_read: int | None = None
    sandbox: Any = False
    trajectory_dir: Path | None = None
    layers: tuple[str, ...] = ()
    guide: str | Path | None = None
    budgets: Any = None
    sub_lm: Any = None
    max_tokens: int | None = None
    timeout: float | None = None
    endpoints: tuple = ()
    access: MemoryAccess = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        """Normalize the quota, layers, budgets and trajectory folder, check the LM limits and derive the
        condition's MemoryAccess (ConfigError on a bad value)."""
        object.__setattr__(self, "k", Quota.parse(self.k))
        object.__setattr__(self, "access", MemoryAccess.of(self.condition, self.k))
        object.__setattr__(self, "layers", parse_layers(self.layers))
        object.__setattr__(self, "budgets", parse_budgets(self.budgets))
        for name in ("max_tokens", "timeout"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or value <= 0):
                raise ConfigError(f"{name} must be a positive number, got {value!r}")
        check_output_cap(self.max_output_chars)
        if self.trajectory_dir is not None:
            object.__setattr__(self, "trajectory_dir", Path(self.trajectory_dir))

    @classmethod
    def of(cls, config: RunConfig | None = None, **options) -> RunConfig:
        """`config` (default RunConfig()) with the fields given as keywords replaced; ConfigError on an unknown one."""
        if config is not None and not isinstance(config, cls):
            raise ConfigError(f"config must be a RunConfig, got {type(config).__name__}; pass LM and options by name")
        known = [f.name for f in fields(cls) if f.init]
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise ConfigError(f"unknown run option(s) {', '.join(unknown)}; use any of {', '.join(known)}")
        return replace(config, **options) if config is not None else cls(**options)


@dataclass(frozen=True)
class RunMetrics:
    """What one run cost and leaked, measured on its own LM calls and tool calls.

    Args:
        iterations, lm_calls, prompt_tokens, completion_tokens: the RLM's iterations and its LM usage (every call).
        converged: the run ended by SUBMIT before its iteration limit (not by dspy's forced extraction).
        sub_lm_calls, sub_prompt_tokens, sub_completion_tokens: the part of those that were llm_query calls from the
            model's code (the main LM's part is the difference).
        cost_usd: what the calls cost in US dollars by litellm's local price map (0 for a scripted LM); None when
            a model is not in the map.
        prompt_chars: characters of the messages sent to the LMs (a dry run's measure of what a model would read).
        payload_chars_in_history: distinct payload characters that reached the LM's messages (agent/leakage.py).
        payload_chars_sent: payload characters sent to the LM, repeats counted.
        payload_chars_by_source: payload_chars_in_history per payload kind (prompt, content, results, ...).
        large_returns, max_return, max_window: tool returns above LARGE_RETURN characters, the largest return,
            the longest window text.
        stdout_chars: REPL output the model saw.
        tool_calls, tool_errors: tool calls made and those that returned "[Error] ...".
        read_chars: payload characters read against the run's budget.
        seconds: wall time of the RLM call.
        constraint_violations: agent queries' violations of the Constraint items that applied to the run.
    """

    iterations: int = 0
    lm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    converged: bool = False
    sub_lm_calls: int = 0
    sub_prompt_tokens: int = 0
    sub_completion_tokens: int = 0
    cost_usd: float | None = 0.0
    prompt_chars: int = 0
    payload_chars_in_history: int = 0
    payload_chars_sent: int = 0
    payload_chars_by_source: dict[str, int] = field(default_factory=dict)
    large_returns: int = 0
    max_window: int = 0
    max_return: int = 0
    stdout_chars: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    read_chars: int = 0
    seconds: float = 0.0
    constraint_violations: int = 0

    def to_dict(self) -> dict:
        """JSON form (the metrics object of the CLI's --json and of trajectories)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> RunMetrics:
        """The metrics of their JSON form; from_dict(to_dict()) == self. A field the form lacks takes its default
        and a key no field has is left out, so trajectories of other versions read too."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})


@dataclass(frozen=True)
class ToolStats:
    """The counters of one run's tool calls (Toolbox.stats), which its RunMetrics report.

    Args:
        tool_calls: calls made, bad ones included.
        tool_errors: calls that returned "[Error] ...".
        large_returns: returns above LARGE_RETURN serialized characters (agent/tools/caps.py).
        max_return: the longest serialized return.
        max_window: the longest window text a return held.
        constraint_violations: agent queries' violations of the Constraint items that applied to the run.
    """

    tool_calls: int = 0
    tool_errors: int = 0
    large_returns: int = 0
    max_return: int = 0
    max_window: int = 0
    constraint_violations: int = 0

    def called(self) -> ToolStats:
        """The counters after one more call."""
        return replace(self, tool_calls=self.tool_calls + 1)

    def returned(self, chars: int, *, error: bool, large: bool, window: int = 0) -> ToolStats:
        """The counters after one return of `chars` serialized characters (`window`: the length of its text)."""
        return replace(self, tool_errors=self.tool_errors + error, large_returns=self.large_returns + large,
                       max_return=max(self.max_return, chars), max_window=max(self.max_window, window))

    def violated(self) -> ToolStats:
        """The counters after one more constraint violation."""
        return replace(self, constraint_violations=self.constraint_violations + 1)


@dataclass(frozen=True)
class MemoryUse:
    """One memory item a run used: its id, rank (search rank, or A1's injection rank) and search score."""

    memory_id: str
    rank: int
    score: float = 0.0

    def to_dict(self) -> dict:
        """JSON form: {memory_id, rank, score}."""
        return asdict(self)


@dataclass(frozen=True)
class AnswerQuery:
    """The SPARQL that produced a run's submitted answer (agent/trajectory.answering_query says which query that is):
    the query tool, where it ran (source: "ontology" or the endpoint URL), its text and sha256, and how it ended
    (rows of a SELECT, None for an ASK; error: the class of its error when no query of the run answered)."""

    tool: str
    source: str
    sparql: str
    sha: str
    rows: int | None = None
    error: str | None = None

    def to_dict(self) -> dict:
        """JSON form: {tool, source, sparql, sha, rows, error}."""
        return asdict(self)


@dataclass(frozen=True)
class RunResult:
    """What one agent run produced.

    Args:
        answer: the submitted (or extracted) answer.
        trajectory_path: the run's JSONL trajectory.
        run_id: the run's id (also on every trajectory line).
        metrics: iterations, LM calls, tokens, tool calls and leakage numbers.
        trace_ref: blob key of the trajectory, when the run had a memory.
        memory_ids_used: memory items injected (A1, A3's hint) or read through tools (A2-A5).
        memory_usage: every item used, with its rank and score.
        memory_ids_filtered: items A1's retrieval found but left out because a run of this very task made them.
        answer_query: the SPARQL that produced the answer (None: the run ran no ontology or endpoint query).
        injected_ref: blob key of the text A1 or A3 put in front of the model (None: nothing was injected).
    """

    answer: str
    trajectory_path: Path
    run_id: str
    metrics: RunMetrics
    trace_ref: str | None = None
    memory_ids_used: tuple[str, ...] = ()
    memory_usage: tuple[MemoryUse, ...] = ()
    memory_ids_filtered: tuple[str, ...] = ()
    answer_query: AnswerQuery | None = None
    injected_ref: str | None = None

    @property
    def answer_hash(self) -> str:
        """sha256 of the answer text (provenance and records name an answer by it)."""
        return sha256(self.answer)

    def to_dict(self) -> dict:
        """The CLI's --json form of a run (the subagent JSON a calling agent reads)."""
        return {"answer": self.answer, "iterations": self.metrics.iterations, "run_id": self.run_id,
                "trajectory_id": self.trace_ref, "log_path": str(self.trajectory_path),
                "memories_used": [u.to_dict() for u in self.memory_usage], "trajectory": str(self.trajectory_path),
                "memory_ids_used": list(self.memory_ids_used), "memory_ids_filtered": list(self.memory_ids_filtered),
                "answer_hash": self.answer_hash, "metrics": self.metrics.to_dict(),
                "answer_query": self.answer_query.to_dict() if self.answer_query else None,
                "injected_ref": self.injected_ref}
