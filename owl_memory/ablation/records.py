"""Ablation records: one line of DIR/results.jsonl per (condition, repeat, phase, checkpoint, task), and what a task
runner reports about the task it ran.

A checkpoint `c` is the holdout evaluation after `train_seen` train tasks (checkpoint 0: before any training).
Train records carry the checkpoint they lead up to.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from ..errors import LoadError
from ..model import RunMetrics, RunResult


@dataclass(frozen=True)
class TaskOutcome:
    """What a task runner reports about one task it ran.

    Args:
        success, judge: the judgment.
        iterations, lm_calls, prompt_tokens, completion_tokens, tool_calls: cost of the run.
        payload_chars_in_history, large_returns: leakage measured on the LM's history.
        memory_ids_used: items the run read or was given.
        extracted: item ids the learning loop stored from this run (the harness keeps them only when it learns).
        validations: pySHACL validations (construction tasks), else None.
        compiled_reused: compiled operators from memory the run applied (construction tasks).
        conflicts: conflict links the learning loop recorded for this run.
        exceptions_used: items used that are exceptions (scope exception).
        error: the exception's type and message when the run failed.
        verify_runs, deltas, undos: a construction agent's SHACL verifications, deltas applied and deltas undone.
        converged: the run ended by SUBMIT before its iteration limit (None: not an RLM run, e.g. symbolic).
        sub_lm_calls, sub_prompt_tokens, sub_completion_tokens: the llm_query part of the LM calls and tokens.
        cost_usd: money the calls cost by litellm's local price map (0 for a scripted LM; None: a model unpriced).
        max_window, stdout_chars, prompt_chars: the longest window text read, REPL output the model saw, and
            characters sent to the LMs.
        memory_ids_filtered: items A1 left out because a run of this very task made them.
        answer_hash: sha256 of the answer text.
        set_P, set_recall, set_F: the TEXT2SPARQL set scores of a task judged on its endpoint (0 for a run that
            failed there), None for other tasks.
        failure_mode: how a failed run failed (the judgment's; iteration-cap for a run that never submitted).
        answer_sparql, answer_sparql_hash: the SPARQL that produced the answer (agent.answering_query) and its
            sha256 (None: the run ran no ontology or endpoint query).
        injected_ref: blob key (in the condition's memory) of the text A1 or A3 put in front of the model.
        max_output_chars: the REPL output cap the run had per iteration.
    """

    success: bool
    judge: str
    iterations: int = 0
    lm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tool_calls: int = 0
    payload_chars_in_history: int = 0
    large_returns: int = 0
    memory_ids_used: tuple[str, ...] = ()
    extracted: tuple[str, ...] = ()
    validations: int | None = None
    compiled_reused: int = 0
    conflicts: int = 0
    exceptions_used: int = 0
    error: str | None = None
    verify_runs: int = 0
    deltas: int = 0
    undos: int = 0
    converged: bool | None = None
    sub_lm_calls: int = 0
    sub_prompt_tokens: int = 0
    sub_completion_tokens: int = 0
    cost_usd: float | None = 0.0
    max_window: int = 0
    stdout_chars: int = 0
    prompt_chars: int = 0
    memory_ids_filtered: tuple[str, ...] = ()
    answer_hash: str | None = None
    set_P: float | None = None  # noqa: N815 - the challenge's own names
    set_recall: float | None = None
    set_F: float | None = None  # noqa: N815
    # what a researcher reads about the run's answer and inputs (set together by researched())
    failure_mode: str | None = None
    answer_sparql: str | None = None
    answer_sparql_hash: str | None = None
    injected_ref: str | None = None
    max_output_chars: int | None = None

    def researched(self, result: RunResult, failure_mode: str | None, max_output_chars: int) -> TaskOutcome:
        """The outcome with the failure mode, what the run's result names (the SPARQL behind the answer and its
        hash, the injected text's blob key) and the REPL output cap it ran with."""
        query = result.answer_query
        return replace(self, failure_mode=failure_mode or None, answer_sparql=query.sparql if query else None,
                       answer_sparql_hash=query.sha if query else None, injected_ref=result.injected_ref,
                       max_output_chars=max_output_chars)

    @classmethod
    def of_run(cls, metrics: RunMetrics, success: bool, judge: str) -> TaskOutcome:
        """The outcome of an RLM run: its judgment, with its costs, leakage, convergence and money spent."""
        m = metrics
        return cls(success, judge, m.iterations, m.lm_calls, m.prompt_tokens, m.completion_tokens, m.tool_calls,
                   m.payload_chars_in_history, m.large_returns, converged=m.converged, sub_lm_calls=m.sub_lm_calls,
                   sub_prompt_tokens=m.sub_prompt_tokens, sub_completion_tokens=m.sub_completion_tokens,
                   cost_usd=m.cost_usd, max_window=m.max_window, stdout_chars=m.stdout_chars,
                   prompt_chars=m.prompt_chars)


@dataclass(frozen=True)
class Placement:
    """Where in an ablation a task ran.

    Args:
        condition: A0..A4 (or a named config such as E3).
        repeat: 0-based repeat index.
        phase: train (learning on) or holdout (memory frozen).
        checkpoint: holdout checkpoint index (train records: the checkpoint they lead up to).
        train_seen: train tasks streamed before this holdout checkpoint (train records: before this task).
        task_id, split: the curriculum task.
    """

    condition: str
    repeat: int
    phase: str
    checkpoint: int
    train_seen: int
    task_id: str
    split: str


@dataclass(frozen=True)
class Record(TaskOutcome, Placement):
    """One task run inside an ablation (one line of results.jsonl): its Placement fields, then its TaskOutcome
    fields (extracted: always empty in holdout), then the memory's size and the wall time.

    Args:
        memory_items: items stored in the condition's memory after the run (archived and superseded ones included).
        seconds: wall time of the run.
        active_items: of those, the items retrieval can return (not archived by forgetting or merging, not
            superseded).
    """

    memory_items: int = 0
    seconds: float = 0.0
    active_items: int = 0

    @classmethod
    def of(cls, where: Placement, outcome: TaskOutcome, memory_items: int = 0, seconds: float = 0.0,
           active_items: int = 0) -> Record:
        """The record of a run: where it ran, what its runner reported, the memory's size and the wall time."""
        return cls(**_fields(where), **_fields(outcome), memory_items=memory_items, seconds=seconds,
                   active_items=active_items)

    @property
    def key(self) -> tuple:
        """What identifies the run inside an ablation (used to resume)."""
        return (self.condition, self.repeat, self.phase, self.checkpoint, self.task_id)

    def to_dict(self) -> dict:
        """JSON-compatible form."""
        d = asdict(self)
        return d | {name: list(getattr(self, name)) for name in _LISTS}

    @classmethod
    def from_dict(cls, d: dict) -> Record:
        """The record a to_dict() wrote (unknown keys ignored, keys an older version did not write defaulted)."""
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        return cls(**kw | {name: tuple(kw.get(name, ())) for name in _LISTS})


_LISTS = ("memory_ids_used", "extracted", "memory_ids_filtered")  # tuple fields, lists in JSON


def _fields(value) -> dict:
    """A dataclass's fields by name (no copies, unlike dataclasses.asdict)."""
    return {f.name: getattr(value, f.name) for f in fields(value)}


def append_record(path: Path, record: Record) -> None:
    """Append one record as a JSON line and flush it to disk (a killed ablation keeps every finished task)."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record.to_dict(), ensure_ascii=False) + "\n")
        f.flush()


def trim_torn(path: Path) -> None:
    """Drop a last line without its newline (a write cut by a kill), so appends start on a fresh line."""
    p = Path(path)
    if not p.exists():
        return
    data = p.read_bytes()
    if data and not data.endswith(b"\n"):
        p.write_bytes(data[:data.rfind(b"\n") + 1])


def read_records(path: Path) -> list[Record]:
    """Every complete record in results.jsonl (a torn last line from a kill is ignored)."""
    if not Path(path).exists():
        return []
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    out = []
    for n, line in enumerate(lines, 1):
        try:
            out.append(Record.from_dict(json.loads(line)))
        except (json.JSONDecodeError, TypeError) as e:
            if n < len(lines):
                raise LoadError(f"results line is not a record: {e}", source=str(path), line=n) from e
    return out
