"""What a sprint run returns: its outcome, baseline, counters, CQ results and history, with the JSON form `--json`
prints."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from ..model import RunMetrics
from .cq import CQResult
from .workspace import Delta


@dataclass(frozen=True)
class BaselineReport:
    """The violations a sprint found before it changed anything.

    Args:
        policy: "exclude" (not the sprint's to fix) or "repair".
        violations: how many there were.
        resolved: how many of them the sprint's changes resolved.
        signatures: violation signature -> number of results with it.
    """

    policy: str
    violations: int
    resolved: int
    signatures: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-compatible form."""
        return {"policy": self.policy, "violations": self.violations, "resolved": self.resolved,
                "signatures": dict(self.signatures)}


@dataclass(frozen=True)
class SprintOutcome:
    """What every sprint, symbolic or agentic, reports at its end.

    Args:
        sprint, run: the sprint's name and the provenance run id.
        cqs_passed, cqs_total: competency questions passing at the end, and in all.
        conforms: no violation outside the baseline; conforms_full: no violation at all.
        violations, violation_signatures: violations outside the baseline (signatures: at most 20).
        baseline: the baseline and what became of it.
    """

    sprint: str
    run: str
    cqs_passed: int
    cqs_total: int
    conforms: bool
    conforms_full: bool
    violations: int
    violation_signatures: tuple[str, ...]
    baseline: BaselineReport

    @property
    def succeeded(self) -> bool:
        """Every CQ passes and the graph conforms (outside the baseline)."""
        return self.cqs_passed == self.cqs_total and self.conforms


@dataclass(frozen=True)
class SprintResult(SprintOutcome):
    """The outcome of one sprint run: its SprintOutcome fields, then the loop's counters and history.

    Args:
        verify_iterations, baseline_checks, nested_checks, validations: verification counts (validations: all
            pySHACL runs).
        lm_calls: LM calls of the LLM proposer.
        compiled_reused, compiled_cq_reused, compiled_repair_reused: compiled operators applied (CQ answers and
            repairs); compiled_new: operators this run stored.
        proposals: proposals made; stuck: ids of CQs no proposal answered.
        cqs: every CQ's result; versions: versions in the workspace; head: the last version's key.
        deltas: the last 10 deltas; report_ref: the key of the final validation report, if stored.
        triples_added: triples in the final graph that the seed did not have.
        metrics: what the LLM proposer's runs cost and leaked (LM calls, tokens, payload characters in the LM
            history, as `owl-memory run` measures them); zeros without one.
        out: the file the working graph was written to, or None.
    """

    verify_iterations: int
    baseline_checks: int
    nested_checks: int
    validations: int
    lm_calls: int
    compiled_reused: int
    compiled_cq_reused: int
    compiled_repair_reused: int
    compiled_new: int
    proposals: int
    stuck: tuple[str, ...]
    cqs: tuple[CQResult, ...]
    versions: int
    head: str
    deltas: tuple[Delta, ...]
    report_ref: str | None
    triples_added: int
    metrics: RunMetrics = RunMetrics()
    out: str | None = None

    def to_dict(self) -> dict:
        """JSON-compatible form (the keys `owl-memory sprint --json` prints, in field order)."""
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}


def _plain(value):
    """A field's JSON-compatible form: typed values by their to_dict, tuples as lists."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value
