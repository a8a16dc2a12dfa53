"""A run as typed values: what a condition grants (`MemoryAccess`), what a run is given (`RunConfig`) and what it
produced (`RunResult` with `RunMetrics` and `MemoryUse` rows)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from ..errors import ConfigError

HINT_CHARS = 300  # A3's packed hint
LAYERS = ("L0", "L1", "L3")  # context layers a run may give the model (agent/context.py computes them)
GRANTS = {"A0": {"layers_read_memory": False}, "A1": {"text": True}, "A2": {"tools": True},
          "A3": {"tools": True, "injected": 1, "hint_chars": HINT_CHARS},
          "A4": {"tools": True, "uncapped": True, "prompt_text": True}}  # condition -> what it grants (A1: + k items)


@dataclass(frozen=True)
class MemoryAccess:
    """What one ablation condition (A0-A4, docs/ablations.md) lets a run do with memory; derived once from the
    condition name (agent/conditions.py lists the names and their help for the CLI, which must start without rdflib).

    Args:
        condition: A0 ... A4.
        tools: the memory_* tools are offered.
        injected: items retrieved for the task up front (A1: k, A3: 1).
        text: those items go into the task as text (A1: title, summary, <= 3 bullets each).
        hint_chars: those items go into the task as one packed hint of at most this many characters (A3).
        uncapped: tool returns are not cut, items carry their whole content, queries return every row (A4).
        prompt_text: the hidden prompt's text is in the model's inputs (A4).
        layers_read_memory: context layers may read memory (L1's AntiPattern titles): every condition but A0.
    """

    condition: str
    tools: bool = False
    injected: int = 0
    text: bool = False
    hint_chars: int = 0
    uncapped: bool = False
    prompt_text: bool = False
    layers_read_memory: bool = True

    @classmethod
    def of(cls, condition: str, k: int = 1) -> MemoryAccess:
        """The access `condition` grants (k: items A1 injects); ConfigError naming the conditions otherwise."""
        if condition not in GRANTS:
            raise ConfigError(f"condition {condition!r} is not one of {', '.join(GRANTS)}")
        grants = dict(GRANTS[condition])
        if grants.get("text"):
            grants["injected"] = k  # A1 injects the top k items
        return cls(condition, **grants)


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


@dataclass(frozen=True)
class RunConfig:
    """Everything one agent run is given besides its task, memory, prompt and ontology; checked on construction.

    Args:
        lm: a DSPy LM, a model string ("openai/gpt-4o-mini", "scripted"), or None for $OWL_MEMORY_LM.
        api_base: an OpenAI-compatible server for a model string (Ollama, vLLM, llama.cpp).
        condition: the ablation condition A0 ... A4 (`access` is what it grants).
        k: items condition A1 injects into the task.
        max_iters, max_llm_calls: the RLM's iteration and LM-call limits.
        max_output_chars: REPL output the model sees per iteration.
        read_budget, reads_per_handle, max_read: the run's read allowance (store.blobs.ReadBudget: characters all
            reads may return, reads of one handle, characters of one read); None keeps ReadBudget's default.
        sandbox: run the model's code under bubblewrap (True, or an agent.sandbox.Sandbox); False: dspy's
            LocalInterpreter, which is not a sandbox.
        trajectory_dir: where the JSONL trajectory goes (default <memory>/runs, else ./.owl-memory/runs).
        layers: context layers given to the model ("L0,L1,L3" or names), the same in every condition.
        guide: what layer L3 summarizes: a guide file, or the guide's text.
    """

    lm: Any = None
    api_base: str | None = None
    condition: str = "A2"
    k: int = 1
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
    access: MemoryAccess = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        """Normalize the layers and trajectory folder and derive the condition's MemoryAccess (ConfigError on a bad
        value)."""
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise ConfigError(f"k (items A1 injects) must be an integer >= 1, got {self.k!r}")
        object.__setattr__(self, "access", MemoryAccess.of(self.condition, self.k))
        object.__setattr__(self, "layers", parse_layers(self.layers))
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
        iterations, lm_calls, prompt_tokens, completion_tokens: the RLM's iterations and LM usage.
        payload_chars_in_history: distinct payload characters that reached the LM's messages (agent/leakage.py).
        payload_chars_sent: payload characters sent to the LM, repeats counted.
        payload_chars_by_source: payload_chars_in_history per payload kind (prompt, content, results, ...).
        large_returns, max_return, max_window: tool returns above LARGE_RETURN characters, the largest return,
            the longest window text.
        stdout_chars: REPL output the model saw.
        tool_calls, tool_errors: tool calls made and those that returned "[Error] ...".
        read_chars: payload characters read against the run's budget.
        seconds: wall time of the RLM call.
    """

    iterations: int = 0
    lm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
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

    def to_dict(self) -> dict:
        """JSON form (the metrics object of the CLI's --json and of trajectories)."""
        return asdict(self)


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
class RunResult:
    """What one agent run produced.

    Args:
        answer: the submitted (or extracted) answer.
        trajectory_path: the run's JSONL trajectory.
        run_id: the run's id (also on every trajectory line).
        metrics: iterations, LM calls, tokens, tool calls and leakage numbers.
        trace_ref: blob key of the trajectory, when the run had a memory.
        memory_ids_used: memory items injected (A1, A3's hint) or read through tools (A2-A4).
        memory_usage: every item used, with its rank and score.
    """

    answer: str
    trajectory_path: Path
    run_id: str
    metrics: RunMetrics
    trace_ref: str | None = None
    memory_ids_used: tuple[str, ...] = ()
    memory_usage: tuple[MemoryUse, ...] = ()

    def to_dict(self) -> dict:
        """The CLI's --json form of a run (the subagent JSON a calling agent reads)."""
        return {"answer": self.answer, "iterations": self.metrics.iterations, "run_id": self.run_id,
                "trajectory_id": self.trace_ref, "log_path": str(self.trajectory_path),
                "memories_used": [u.to_dict() for u in self.memory_usage], "trajectory": str(self.trajectory_path),
                "memory_ids_used": list(self.memory_ids_used), "metrics": self.metrics.to_dict()}
