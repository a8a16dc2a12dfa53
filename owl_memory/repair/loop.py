"""The repair command's loop: rounds of a repair session (repair.session) that verify, patch each violation
(compiled operators from memory first), re-verify and undo what failed; then compile what worked."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from rdflib import Graph

from ..model import Violation
from ..rdfio import load_graph
from ..vocab import SH
from .cascade import cascades
from .changes import change_list
from .compiling import compile_cascades
from .context import Context
from .cost import change_cost
from .guards import Guards
from .patch import Candidate
from .paths import parse, value_triple
from .registry import candidates, is_fixed_term, run_strategy
from .result import AppliedOperator, RepairResult
from .session import RepairSession, Step

if TYPE_CHECKING:
    from ..store import Memory

_DROPPERS = frozenset({SH.MaxCountConstraintComponent, SH.QualifiedMaxCountConstraintComponent,
                       SH.UniqueLangConstraintComponent, SH.ClosedConstraintComponent,
                       SH.DisjointConstraintComponent})  # may make other violations moot: first
_NESTED = frozenset({SH.NodeConstraintComponent, SH.AndConstraintComponent, SH.OrConstraintComponent,
                     SH.XoneConstraintComponent, SH.NotConstraintComponent, SH.QualifiedMinCountConstraintComponent,
                     SH.QualifiedMaxCountConstraintComponent})  # their operators run trial checks: last, when not moot
FIXED_TERM = "the focus node is a fixed term named by the shapes"


def repair(data, shapes, *, memory: Memory | None = None, max_rounds: int = 10, protected=frozenset(), run_id=None,
           proposer=None, keep_values: bool = False, progress=None) -> RepairResult:
    """Repair `data` against `shapes` with deterministic operators; compile what verified into `memory`.

    The smallest change set that verifies wins, so an optional bad value is dropped (one triple) rather than
    replaced (two); `keep_values` offers no drop of an offending value, so values are replaced or completed instead.

    `proposer` (e.g. llm.repair_proposer.LLMRepairProposer; off when None) is asked, once per violation, for a
    change set when no operator's patch is left; that goes through the same rules and verification, and compiles.
    `progress` (optional) is called with a one-line status after each verification (the CLI shows it on a terminal).
    """
    if memory is not None:
        memory.require_writable()  # what verifies is compiled into it: refuse before any work
    original, shapes = load_graph(data), load_graph(shapes)
    guards = Guards(original, shapes, protected)
    session = RepairSession(_copy(original), shapes, lambda: guards, memory=memory, proposer=proposer,
                            keep_values=keep_values, blobs=memory.blobs if memory is not None else None)
    loop = _Loop(original, session, run_id or "repair")
    loop.run(max_rounds, progress or (lambda line: None))
    return loop.result()


class _Loop:
    """The repair command's rounds over a session: which patches a round tries, what the rounds led to."""

    def __init__(self, original: Graph, session: RepairSession, run_id: str) -> None:
        """Verify the data once (its report kept when there is a memory to compile into)."""
        self.original, self.s, self.run_id = original, session, run_id
        self.res = RepairResult(graph=session.graph)
        self.last = session.verify(store=session.memory is not None)
        self.report_key = self.last.report_ref.key if self.last.report_ref is not None else ""  # compiled from it
        self.res.initial_violations = self.last.violation_count
        self.cascades: list = []

    def run(self, max_rounds: int, progress) -> None:
        """Patch, re-verify until the graph conforms, nothing applies or the rounds run out."""
        for n in range(max_rounds):
            progress(f"round {n + 1}: {self.last.violation_count} violations to repair")
            if self.last.conforms:
                break
            chosen = self._choose(self.last.violations)
            progress(f"round {n + 1}: {len(chosen)} patches chosen, verifying")
            if not chosen:
                break
            step = self.s.apply(chosen)
            new = self.s.verify(step.focus)
            self.cascades += cascades(chosen, {v.key for v in self.last.violations}, new.violations)
            if self._settle(step, new):
                new = self.s.verify()
            self.last = new

    def _choose(self, violations: list[Violation]) -> list[Candidate]:
        """One guarded, non-conflicting patch per violation; a result whose own cheapest patch costs less than the
        patches of the sh:detail results it has goes first, and makes those moot."""
        focus = {v.focus for v in violations}
        self.s.round(violations)
        chosen, moot = self._covering(violations, focus)
        added: set = {t for c in chosen for t in c.patch.added}
        removed: set = {t for c in chosen for t in c.patch.removed}
        done = moot | {c.violation.key for c in chosen}
        for v in sorted(violations, key=lambda v: (v.component not in _DROPPERS, v.component in _NESTED)):
            if v.key in done or v.component in _NESTED and _touched(v.value, added | removed):
                continue  # chosen or made moot already, or its value node changes this round: judge it after
            if _dropped(self.s.ctx, v, removed):
                continue  # a patch chosen this round takes its value off the path: nothing left to repair
            c = next(self.s.candidates(v, focus), None)
            if c is None or c.patch.clashes(added, removed):
                continue  # none, or its best patch clashes with one chosen this round: retry after the re-verify
            chosen.append(c)
            added, removed = added | c.patch.added, removed | c.patch.removed
        return chosen

    def _covering(self, violations: list[Violation], focus: set) -> tuple[list[Candidate], set]:
        """Results with sh:detail results this round whose cheapest patch found with no trial check (dropping the
        link to the value, say) costs less than their details' patches together: those patches, and the keys of the
        details they make moot (the details' value is no longer reached)."""
        details: dict = {}
        for v in violations:
            if v.detail_of:
                details.setdefault(v.detail_of, []).append(v)
        chosen: list[Candidate] = []
        moot: set = set()
        for v in violations:
            mine = next(self.s.candidates(v, focus, cheap=True), None) if " | ".join(v.key) in details else None
            if mine is None:
                continue
            theirs = [next(self.s.candidates(d, focus), None) for d in details[" | ".join(v.key)]]
            if any(c is None for c in theirs) or self._cost(mine) < sum(self._cost(c) for c in theirs if c):
                chosen.append(mine)
                moot |= {d.key for d in details[" | ".join(v.key)]}
        return chosen, moot

    def _cost(self, c: Candidate) -> int:
        """A candidate's cost on the working graph (repair.cost)."""
        return change_cost(self.s.graph, c.patch.added, c.patch.removed)

    def _settle(self, step: Step, new) -> bool:
        """Note what fixed its violation; undo the others (they are not tried again). True when something was undone."""
        cleared, failed = self.s.settle(step, new)
        self.res.compiled_reused += len([c for c in step.candidates if c.item is not None])
        self.res.prevented += len([f for c in cleared for f in c.follow_ups])
        self.res.operators_applied += [AppliedOperator(c.violation.signature, c.patch.operator, c.patch.choice,
                                                       str(c.violation.focus), c.memory_key) for c in cleared]
        for c in failed:
            self.s.refuse(c)
        if failed:
            self.s.undo(failed, keep=frozenset(t for c in cleared for t in c.patch.added))
        return bool(failed)

    def result(self) -> RepairResult:
        """Fill in the delta, leftovers and counts, and compile what worked into memory."""
        r, s = self.res, self.s
        r.added = {t for t in s.graph if t not in self.original}
        r.removed = {t for t in self.original if t not in s.graph}
        r.conforms = self.last.conforms
        r.changes = change_list(self.original, s.shapes, s.worked, r.added, r.removed)
        r.verify_iterations, r.scopes = len(s.scopes), s.scopes
        r.nested_checks = s.checks.count
        r.proposed, r.lm_calls = s.source.proposed, s.source.lm_calls
        left = sorted({v.signature for v in self.last.violations})
        r.unrepaired = left
        r.reasons = {sig: self._reason([v for v in self.last.violations if v.signature == sig]) for sig in left}
        if s.memory is not None:
            r.compiled_new = s.compile(self.run_id, self.report_key, set(left))
            compile_cascades(s.memory, s.shapes, self.cascades, s.worked, self.run_id)
        return r

    def _reason(self, vs: list[Violation]) -> str:
        """Why a signature is left unrepaired, in words."""
        v = vs[0]
        if is_fixed_term(v, self.s.shapes):
            return f"{FIXED_TERM} (sh:targetNode or its own IRI); only editing the shapes, which repair never does, " \
                   "could change it"
        if candidates(self.s.ctx, v):
            return "every candidate patch failed verification or broke a minimal-change rule"
        path = self.s.ctx.param(v.shape, "path")
        if path is not None and parse(self.s.shapes, path) is None:
            return "the path is too complex for the library operators; hand it to the proposer"
        if self.s.ctx.keep_values and run_strategy("value.drop", replace(self.s.ctx, keep_values=False), v):
            return "no conforming value can be derived from it or synthesized (no value is ever copied from another " \
                   "node), and keeping values forbids dropping it: drop it (run without --keep-values) or hand it " \
                   "to the proposer"
        return "no library operator derives a value for this constraint here; hand it to the proposer"


def _copy(original: Graph) -> Graph:
    """The graph a repair changes: a copy of the input keeping its base and prefixes (the repaired file's)."""
    g = Graph(base=original.base)
    for prefix, namespace in original.namespaces():
        g.bind(prefix, namespace, override=True, replace=True)
    for t in original:
        g.add(t)
    return g


def _dropped(ctx: Context, v: Violation, removed: set) -> bool:
    """True when a value-level violation's value is taken off its path by a removal chosen this round."""
    if v.value is None or v.value == v.focus or v.shape is None or not removed:
        return False
    path = ctx.param(v.shape, "path")
    return path is not None and value_triple(ctx, v.focus, path, v.value) in removed


def _touched(node, delta: set) -> bool:
    """True when `node` is the subject or object of a triple in `delta`."""
    return node is not None and any(node in (t[0], t[2]) for t in delta)
