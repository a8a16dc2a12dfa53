"""What an agentic sprint returns and writes as its summary: per-CQ outcome, final conformance, what the agent did
(deltas applied and undone, verify runs, repairs, compiled operators), what the model cost and leaked, and where the
trajectory, the summary and the built graph are."""

from __future__ import annotations

from dataclasses import dataclass, fields

from ..model import RunMetrics
from .cq import CQResult
from .session import SessionCounts
from .sprint_result import SprintOutcome


@dataclass(frozen=True)
class AgentSprintResult(SprintOutcome):
    """The outcome of one agentic sprint: its SprintOutcome fields (`run` is the agent run's id, on every trajectory
    line and in PROV-O), then what the agent did.

    Args:
        status: how the run ended: ok (SUBMIT), extracted (the budget ran out) or error (the LM or interpreter
            failed; `error` says how).
        cqs: each competency question's result.
        counts: what the agent did (session.SessionCounts: verify runs, deltas applied and undone, refusals,
            repairs, compiled operators from memory applied and verified).
        validations: every pySHACL run: the agent's verify runs, nested trial checks, the baseline and final checks.
        compiled_new: compiled operators this run stored; episode: the Episode stored for it (None unless done).
        metrics: LM calls, prompt and completion tokens, tool calls and leakage, measured as `owl-memory run` does.
        memory_used: memory items the run used (read through tools, injected, or applied as compiled operators).
        trajectory, summary, out: the trajectory JSONL, this summary's JSON file, the built graph's file (or None).
        head, versions, triples_added: the last version's key, versions made, triples the seed did not have.
        error: the failure's type and message when status is "error".
    """

    status: str
    cqs: tuple[CQResult, ...]
    counts: SessionCounts
    validations: int
    compiled_new: int
    episode: str | None
    metrics: RunMetrics
    memory_used: tuple[str, ...]
    trajectory: str
    summary: str
    out: str | None
    head: str
    versions: int
    triples_added: int
    error: str | None = None

    @property
    def lm_calls(self) -> int:
        """LM calls the agent made."""
        return self.metrics.lm_calls

    def to_dict(self) -> dict:
        """JSON-compatible form (what `owl-memory sprint --agent --json` prints and summary.json holds): the fields
        in order, the counts flat."""
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, SessionCounts):
                out.update(value.to_dict())
            elif hasattr(value, "to_dict"):
                out[f.name] = value.to_dict()
            else:
                out[f.name] = [v.to_dict() for v in value] if f.name == "cqs" else \
                    list(value) if isinstance(value, tuple) else value
        return {**out, "succeeded": self.succeeded}
