"""Ontology construction sprints: CQs + seed ontology + shapes -> propose / apply / verify / repair until done.

Violations that exist before a sprint starts (its *baseline*, e.g. shapes that target a vocabulary's own
class IRIs) are reported but are not the sprint's to fix: with `baseline: exclude` (the default) the sprint's
`conforms` means "no violation except the baseline ones", and the baseline focus nodes are protected from
repair. With `baseline: repair` every violation counts and the repairer may touch every node.

A sprint that ends with every CQ passing and a conforming graph compiles its answers (compiled_answers.py); the
next sprint with the same memory applies them by computation first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from ..model import RunMetrics
from ..repair import VerifyResult, verify
from .baseline import Baseline
from .compiled_answers import store_answers, stored_answer
from .cq import CompetencyQuestion, evaluate_all, passed
from .output import check_out, write_out
from .proposer import Proposal, SymbolicProposer
from .sprint_events import BaselineChecked, CompiledReplayed, Proposed, Repaired, SprintDone, SprintEvent, StepDone
from .sprint_file import Sprint, load_sprint, merged
from .sprint_result import SprintResult
from .workspace import Delta, Workspace

if TYPE_CHECKING:
    from ..store import Memory

MAX_PROPOSALS = 3  # proposals for one CQ before it counts as stuck
MAX_SIGNATURES = 20  # violation signatures in a result
LAST_DELTAS = 10  # deltas in a result


@dataclass
class _State:
    """Counters and bookkeeping of one sprint run."""

    verify_iterations: int = 0
    nested_checks: int = 0
    lm_calls: int = 0
    compiled_reused: int = 0
    compiled_new: int = 0
    repair_reused: int = 0
    repair_compiled: int = 0
    proposals: int = 0
    solved: dict = field(default_factory=dict)  # cq id -> deltas that answered it
    stuck: set = field(default_factory=set)
    proposed: dict = field(default_factory=dict)  # cq id -> proposals made
    unrepaired: list = field(default_factory=list)


class SprintRun:
    """One run of a sprint over a memory: a Workspace, a proposer, verify and repair.

    Args:
        sprint: a Sprint (or a path to its YAML).
        memory: the Memory holding blobs (versions, deltas, reports) and compiled operators.
        proposer: an LLM proposer (owl_memory.llm.proposer.LLMProposer) or None; the SymbolicProposer is always there
            as the fallback.
        progress: optional callback(SprintEvent) for displays.
        run_id: the provenance run id (a timestamped one when None).
        out: a file the working graph is written to at the end (checked before the sprint starts), or None.
    """

    def __init__(self, sprint: Sprint | str | Path, memory: Memory, proposer=None,
                 progress: Callable[[SprintEvent], None] | None = None, run_id: str | None = None, out=None):
        """Load the sprint, open its workspace over the seed and shapes; nothing is verified yet (a memory that cannot
        be written is MemoryReadOnly now: the sprint stores graph versions and compiled answers there)."""
        self.sprint = sprint if isinstance(sprint, Sprint) else load_sprint(sprint)
        memory.require_writable()
        self.memory = memory
        self.symbolic = SymbolicProposer(self.sprint.namespace)
        self.llm = proposer
        self.progress = progress or (lambda event: None)
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%f")
        self.run_id = run_id or f"sprint-{self.sprint.name}-{stamp}"
        self.ws = Workspace(memory, merged(self.sprint.ontology), merged(self.sprint.shapes))
        self.state = _State()
        self._baseline: Baseline | None = None
        self.out = out

    @property
    def baseline(self) -> Baseline:
        """What the seed violates before any change (checked when the run starts)."""
        assert self._baseline is not None  # run() checks the baseline before anything else
        return self._baseline

    # ---- verification in the sprint's scope ----
    def _verify(self) -> VerifyResult:
        """Verify the working graph (counted as one verify iteration)."""
        self.state.verify_iterations += 1
        return verify(self.ws.working, self.ws.shapes, blobs=self.memory.blobs)

    def _outside_baseline(self, v: VerifyResult) -> list:
        """The violations of `v` that are the sprint's: all of them minus the baseline ones."""
        return self.baseline.mine(v.violations)

    def _frozen_nodes(self) -> set:
        """Nodes the sprint must not edit: the baseline focus nodes when the baseline is excluded."""
        return self.baseline.frozen

    # ---- the loop ----
    def run(self) -> SprintResult:
        """Run the sprint to the end (all CQs pass and in-scope conformance, or the step budget)."""
        check_out(self.out)
        self._check_baseline()
        v = self._replay_compiled()
        for step in range(self.sprint.max_steps):
            cq = self._next_cq()
            if cq is None and v is not None and self._settled(v):
                break
            v = self._step(step, cq)
        return self._finish(v)

    def _check_baseline(self) -> None:
        """Verify the seed before any change: what fails now is the baseline."""
        self._baseline = Baseline.check(self.ws, self.sprint.baseline, self.memory.blobs)
        self.progress(BaselineChecked(self.baseline.result.violation_count))

    def _next_cq(self) -> CompetencyQuestion | None:
        """The first failing CQ that is not stuck (proposed MAX_PROPOSALS times, or with no proposal)."""
        results = evaluate_all(self.sprint.cqs, self.ws.working)
        for c in (c for c in self.sprint.cqs if not passed(results, c.id)):
            if self.state.proposed.get(c.id, 0) >= MAX_PROPOSALS:
                self.state.stuck.add(c.id)
            if c.id not in self.state.stuck:
                return c
        return None

    def _settled(self, v: VerifyResult) -> bool:
        """True when nothing in scope is violated, or repair made no progress on what is left."""
        mine = _sigs(self._outside_baseline(v))
        return not mine or self.state.unrepaired == mine

    def _step(self, step: int, cq: CompetencyQuestion | None) -> VerifyResult:
        """One step: propose for `cq` (when given), apply, verify, repair what is not the baseline."""
        if cq is not None:
            self.state.proposed[cq.id] = self.state.proposed.get(cq.id, 0) + 1
            proposal = self._propose(cq)
            if not proposal.passes or not proposal.added:
                self.state.stuck.add(cq.id)
            else:
                delta = self.ws.apply(proposal.added, note=f"propose {cq.id}")
                self.state.solved.setdefault(cq.id, []).append(delta)
        v = self._verify()
        self.progress(StepDone(step + 1, cq.id if cq else None, len(self._outside_baseline(v))))
        if self._outside_baseline(v):
            v = self._repair(cq)
        return v

    def _propose(self, cq: CompetencyQuestion) -> Proposal:
        """The LLM proposer's answer when there is one and it works, else the symbolic one."""
        if self.llm is not None:
            before = self.llm.calls
            proposal = self.llm.propose(cq, self.ws.working, self.ws.shapes, memory=self.memory)
            self.state.lm_calls += self.llm.calls - before
            if proposal.passes and proposal.added:
                self.state.proposals += 1
                return proposal
        proposal = self.symbolic.propose(cq, self.ws.working, self.ws.shapes)
        self.state.proposals += 1
        self.progress(Proposed(cq.id, proposal.source, len(proposal.added)))
        return proposal

    def _repair(self, cq: CompetencyQuestion | None) -> VerifyResult:
        """Repair with the memory's compiled operators; what repair hands back goes to the proposer, then repair."""
        v = self._repair_once(cq)
        mine = self._outside_baseline(v)
        extra = self.symbolic.propose_for_violations(mine, self.ws.working, self.ws.shapes) if mine else []
        delta = self.ws.apply([t for t in extra if t[0] not in self._frozen_nodes()], note="propose missing values")
        if delta is None:
            return v
        self._attribute(cq, delta)
        v = self._verify()
        return self._repair_once(cq) if self._outside_baseline(v) else v

    def _repair_once(self, cq: CompetencyQuestion | None) -> VerifyResult:
        """One repair call on the working graph (base triples protected), applied as a delta, then verified."""
        from ..repair import repair

        r = repair(self.ws.working, self.ws.shapes, memory=self.memory, max_rounds=self.sprint.max_repair_rounds,
                   protected=frozenset(self.ws.base), run_id=self.run_id)
        self.state.verify_iterations += r.verify_iterations
        self.state.nested_checks += r.nested_checks
        self.state.repair_reused += r.compiled_reused
        self.state.repair_compiled += len(r.compiled_new)
        added = [t for t in r.added if t[0] not in self._frozen_nodes()]
        self._attribute(cq, self.ws.apply(added, r.removed, note=f"repair {cq.id if cq else 'graph'}"))
        self.progress(Repaired(len(r.added), len(r.removed), r.conforms))
        v = self._verify()
        self.state.unrepaired = _sigs(self._outside_baseline(v))
        return v

    def _attribute(self, cq: CompetencyQuestion | None, delta: Delta | None) -> None:
        """Count a delta as part of the answer to `cq` (what a rerun replays for it)."""
        if delta is not None and cq is not None:
            self.state.solved.setdefault(cq.id, []).append(delta)

    # ---- compiled answers ----
    def _replay_compiled(self) -> VerifyResult | None:
        """Apply, in one delta, the compiled answers of every failing CQ; verify once; None if there were none."""
        results = evaluate_all(self.sprint.cqs, self.ws.working)
        answers = [(a, cq.id) for cq in self.sprint.cqs if not passed(results, cq.id)
                   for a in [stored_answer(self.memory, cq)] if a is not None]
        if not answers:
            return None
        self.ws.apply({t for (_, add, _), _ in answers for t in add},
                      {t for (_, _, rem), _ in answers for t in rem}, note="compiled CQ answers")
        self.state.compiled_reused += len(answers)
        self.progress(CompiledReplayed(len(answers)))
        v = self._verify()
        results = evaluate_all(self.sprint.cqs, self.ws.working)
        for (op, _, _), cq_id in answers:
            self.memory.record_use(op.id, passed(results, cq_id) and not self._outside_baseline(v))
        return v

    # ---- the result ----
    def _finish(self, v: VerifyResult | None) -> SprintResult:
        """Final check, compile on success, and the result."""
        v = v if v is not None else self._verify()
        results = evaluate_all(self.sprint.cqs, self.ws.working)
        mine = self._outside_baseline(v)
        done = sum(r.passed for r in results)
        if done == len(results) and not mine:
            self.state.compiled_new = store_answers(self.memory, self.ws, self.sprint.name, self.sprint.cqs, results,
                                                    self.state.solved, self.run_id)
        self.progress(SprintDone(done, len(results), not mine))
        out = write_out(self.ws, self.sprint, self.out)
        s = self.state
        return SprintResult(
            self.sprint.name, self.run_id, done, len(results), not mine, v.conforms, len(mine),
            tuple(sorted(set(_sigs(mine)))[:MAX_SIGNATURES]), self.baseline.report(v), s.verify_iterations, 1,
            s.nested_checks, s.verify_iterations + s.nested_checks + 1, s.lm_calls, s.compiled_reused + s.repair_reused,
            s.compiled_reused, s.repair_reused, s.compiled_new + s.repair_compiled, s.proposals, tuple(sorted(s.stuck)),
            tuple(results), len(self.ws.versions), self.ws.head.key, tuple(self.ws.deltas[-LAST_DELTAS:]),
            v.report_ref.key if v.report_ref else None, len(set(self.ws.working) - set(self.ws.base)),
            self.llm.metrics if self.llm is not None else RunMetrics(), out)


def run_sprint(sprint: Sprint | str | Path, memory: Memory, *, proposer=None,
               progress: Callable[[SprintEvent], None] | None = None, run_id: str | None = None,
               out=None) -> SprintResult:
    """Run a sprint (a Sprint or a YAML path) over a memory; `proposer` (e.g. owl_memory.llm.proposer.LLMProposer)
    is asked before the symbolic proposer; `out` (a file path) gets the working graph at the end."""
    return SprintRun(sprint, memory, proposer=proposer, progress=progress, run_id=run_id, out=out).run()


def _sigs(violations: list) -> list:
    """The sorted signatures of some violations."""
    return sorted(x.signature for x in violations)
