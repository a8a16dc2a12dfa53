"""The repair loop: verify, patch each violation (compiled operators from memory first), re-verify, compile."""

from __future__ import annotations

from dataclasses import replace

from rdflib import Graph

from ..rdfio import load_graph
from ..vocab import SH
from .candidates import Candidates, fingerprint
from .cascade import cascades
from .changes import change_list
from .compiling import compile_cascades, compile_decisions
from .context import Context
from .cost import change_cost
from .guards import Guards
from .patch import Chosen, Patch
from .paths import parse, value_triple
from .proposed import OPERATOR as PROPOSED
from .registry import candidates, is_fixed_term, ranked_candidates, run_strategy
from .result import AppliedOperator, RepairResult
from .verification import NestedChecks, Violation, delta_focus, verify

_DROPPERS = frozenset({SH.MaxCountConstraintComponent, SH.QualifiedMaxCountConstraintComponent,
                       SH.UniqueLangConstraintComponent, SH.ClosedConstraintComponent,
                       SH.DisjointConstraintComponent})  # may make other violations moot: first
_NESTED = frozenset({SH.NodeConstraintComponent, SH.AndConstraintComponent, SH.OrConstraintComponent,
                     SH.XoneConstraintComponent, SH.NotConstraintComponent, SH.QualifiedMinCountConstraintComponent,
                     SH.QualifiedMaxCountConstraintComponent})  # their operators run trial checks: last, when not moot
FIXED_TERM = "the focus node is a fixed term named by the shapes"


def repair(data, shapes, *, memory=None, max_rounds: int = 10, protected=frozenset(), run_id=None,
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
    loop = _Loop(original, shapes, memory, protected, run_id, proposer, keep_values)
    loop.run(max_rounds, progress or (lambda line: None))
    return loop.result()


class _Loop:
    """State of one repair run: working graph, guards, candidate source, failures, what worked."""

    def __init__(self, original: Graph, shapes: Graph, memory, protected, run_id, proposer, keep_values) -> None:
        """Copy the data; set up the run's guards, candidate source, nested checks and first context."""
        self.original, self.shapes, self.memory = original, shapes, memory
        self.run_id = run_id or "repair"
        self.g = Graph(base=original.base)  # the repaired file keeps the input's base and prefixes
        for prefix, namespace in original.namespaces():
            self.g.bind(prefix, namespace, override=True, replace=True)
        for t in original:
            self.g.add(t)
        self.guards = Guards(original, shapes, protected)
        self.source = Candidates(memory, shapes, self.guards.protected, proposer)
        self.ctx = Context(self.g, shapes, checks=NestedChecks(shapes), keep_values=keep_values,
                           learned=self.source.learned if memory is not None else None)
        self.failed: dict = {}  # violation key -> fingerprints of its patches that did not verify
        self.worked: dict[str, list[Chosen]] = {}  # signature -> the chosen patches that fixed it
        self.applied: list[Chosen] = []  # every patch that fixed its violation, in order
        self.res = RepairResult(graph=self.g)
        self.last, self.report_ref = None, None
        self.cascades: list = []

    def run(self, max_rounds: int, progress) -> None:
        """Verify, patch, re-verify until the graph conforms, nothing applies or the rounds run out."""
        self.last = self._verify(None)
        self.res.initial_violations = self.last.violation_count
        for n in range(max_rounds):
            progress(f"round {n + 1}: {self.last.violation_count} violations to repair")
            if self.last.conforms:
                break
            chosen = self._choose(self.last.violations)
            progress(f"round {n + 1}: {len(chosen)} patches chosen, verifying")
            if not chosen:
                break
            focus = self._apply(chosen)
            before = {v.key for v in self.last.violations}
            new = self._verify(focus)
            self.cascades += cascades(chosen, before, new.violations)
            if self._settle(chosen, new):
                new = self._verify(None)
            self.last = new

    def _verify(self, focus):
        """One counted verification, merged with the previous result when focus-scoped."""
        first = self.last is None and self.memory is not None
        r = verify(self.g, self.shapes, focus=focus, blobs=self.memory.blobs if first else None)
        self.report_ref = r.report_ref if first else self.report_ref
        self.res.verify_iterations += 1
        self.res.scopes.append(r.scope)
        if r.scope == "focus":
            keep = [v for v in self.last.violations if v.focus not in focus]
            r.violations = sorted(keep + r.violations, key=lambda v: v.key)
            r.violation_count, r.conforms = len(r.violations), not r.violations
        return r

    def _choose(self, violations: list[Violation]) -> list[Chosen]:
        """One guarded, non-conflicting patch per violation; a result whose own cheapest patch costs less than the
        patches of the sh:detail results it has goes first, and makes those moot."""
        focus = {v.focus for v in violations}
        self.ctx = replace(self.ctx, flagged=frozenset((v.focus, v.value) for v in violations if v.value is not None),
                           reported=frozenset(v.key for v in violations))
        chosen, moot = self._covering(violations, focus)
        added, removed = {t for c in chosen for t in c.patch.added}, {t for c in chosen for t in c.patch.removed}
        done = moot | {c.violation.key for c in chosen}
        for v in sorted(violations, key=lambda v: (v.component not in _DROPPERS, v.component in _NESTED)):
            if v.key in done or v.component in _NESTED and _touched(v.value, added | removed):
                continue  # chosen or made moot already, or its value node changes this round: judge it after
            if _dropped(self.ctx, v, removed):
                continue  # a patch chosen this round takes its value off the path: nothing left to repair
            for p, item in self.source.of(self.ctx, v):
                if fingerprint(p) in self.failed.get(v.key, set()) or not self.guards.allow(self.g, p, focus):
                    continue
                if p.removed & (added | removed) or p.added & removed:
                    break  # its best patch clashes with one chosen this round: retry after the re-verify
                chosen.append(Chosen(v, p, item))
                added, removed = added | p.added, removed | p.removed
                break
        return chosen

    def _covering(self, violations: list[Violation], focus: set) -> tuple[list[Chosen], set]:
        """Results with sh:detail results this round whose cheapest patch found with no trial check (dropping the
        link to the value, say) costs less than their details' patches together: those patches, and the keys of the
        details they make moot (the details' value is no longer reached)."""
        details: dict = {}
        for v in violations:
            if v.detail_of:
                details.setdefault(v.detail_of, []).append(v)
        chosen, moot = [], set()
        for v in violations:
            mine = self._first(v, focus, cheap=True) if " | ".join(v.key) in details else None
            if mine is None:
                continue
            theirs = [self._first(d, focus) for d in details[" | ".join(v.key)]]
            if None in theirs or self._cost(mine[0]) < sum(self._cost(p) for p, _ in theirs):
                chosen.append(Chosen(v, *mine))
                moot |= {d.key for d in details[" | ".join(v.key)]}
        return chosen, moot

    def _first(self, v: Violation, focus: set, cheap: bool = False):
        """The first (patch, compiled item id) for `v` the rules allow and that has not failed (None: none); `cheap`:
        only the library's strategies that run no trial check."""
        found = ((p, None) for _, p in ranked_candidates(self.ctx, v, cheap=True)) if cheap else \
            self.source.of(self.ctx, v)
        return next(((p, item) for p, item in found if fingerprint(p) not in self.failed.get(v.key, set())
                     and self.guards.allow(self.g, p, focus)), None)

    def _cost(self, p: Patch) -> int:
        """A patch's cost on the working graph (repair.cost)."""
        return change_cost(self.g, p.added, p.removed)

    def _apply(self, chosen: list[Chosen]) -> set | None:
        """Apply the chosen patches; returns the nodes to re-verify (None: the whole graph)."""
        added, removed = set(), set()
        for _, p, _ in chosen:
            for t in p.removed:
                self.g.remove(t)
            for t in p.added:
                self.g.add(t)
            added |= p.added
            removed |= p.removed
        near = delta_focus(self.g, added, removed)
        return None if near is None else near | {v.focus for v, _, _ in chosen}

    def _settle(self, chosen: list[Chosen], new) -> bool:
        """Record which patches fixed their violation; undo the others. True when something was undone."""
        still, undone = {v.key for v in new.violations}, False
        near = {(v.focus, v.signature) for v in new.violations}
        fixed = {id(p) for v, p, _ in chosen if v.key not in still
                 and (p.operator != PROPOSED or (v.focus, v.signature) not in near)}  # a proposal must clear its focus
        keep = {t for _, p, _ in chosen if id(p) in fixed for t in p.added}
        for c in chosen:
            ok = id(c.patch) in fixed
            self._record_uses(c, ok)
            if ok:
                self._worked(c)
                continue
            self.failed.setdefault(c.violation.key, set()).add(fingerprint(c.patch))
            for t in c.patch.added - keep:
                self.g.remove(t)
            for t in c.patch.removed:
                self.g.add(t)
            undone = True
        return undone

    def _record_uses(self, c: Chosen, ok: bool) -> None:
        """Count a use of the follow-ups folded into the patch and of the compiled item it came from, in memory."""
        for fid in self.source.follow_ups_in(c.patch):
            self.memory.record_use(fid, ok)
            self.res.prevented += ok
        if c.item is not None and self.memory is not None:
            self.memory.record_use(c.item, ok)
            self.res.compiled_reused += 1

    def _worked(self, c: Chosen) -> None:
        """Note a patch that fixed its violation (compiled at the end) and report it."""
        v, p = c.violation, c.patch
        self.worked.setdefault(v.signature, []).append(c)
        self.applied.append(c)
        key = self.source.memory_key(c.item) if c.item is not None else None
        self.res.operators_applied.append(AppliedOperator(v.signature, p.operator, p.choice, str(v.focus), key))

    def result(self) -> RepairResult:
        """Fill in the delta, leftovers and counts, and compile what worked into memory."""
        r = self.res
        r.added = {t for t in self.g if t not in self.original}
        r.removed = {t for t in self.original if t not in self.g}
        r.conforms = self.last.conforms
        r.changes = change_list(self.original, self.shapes, self.applied, r.added, r.removed)
        r.nested_checks = self.ctx.checks.count
        r.proposed, r.lm_calls = self.source.proposed, self.source.lm_calls
        left = sorted({v.signature for v in self.last.violations})
        r.unrepaired = left
        r.reasons = {s: self._reason([v for v in self.last.violations if v.signature == s]) for s in left}
        if self.memory is not None:
            r.compiled_new = compile_decisions(self.memory, self.shapes, self.worked, set(left), self.source.searched,
                                               self.run_id, self.report_ref.key)
            compile_cascades(self.memory, self.shapes, self.cascades, self.worked, self.run_id)
        return r

    def _reason(self, vs: list[Violation]) -> str:
        """Why a signature is left unrepaired, in words."""
        v = vs[0]
        if is_fixed_term(v, self.shapes):
            return f"{FIXED_TERM} (sh:targetNode or its own IRI); only editing the shapes, which repair never does, " \
                   "could change it"
        if candidates(self.ctx, v):
            return "every candidate patch failed verification or broke a minimal-change rule"
        path = self.ctx.param(v.shape, "path")
        if path is not None and parse(self.shapes, path) is None:
            return "the path is too complex for the library operators; hand it to the proposer"
        if self.ctx.keep_values and run_strategy("value.drop", replace(self.ctx, keep_values=False), v):
            return "no conforming value can be derived from it or synthesized (no value is ever copied from another " \
                   "node), and keeping values forbids dropping it: drop it (run without --keep-values) or hand it " \
                   "to the proposer"
        return "no library operator derives a value for this constraint here; hand it to the proposer"


def _dropped(ctx: Context, v: Violation, removed: set) -> bool:
    """True when a value-level violation's value is taken off its path by a removal chosen this round."""
    if v.value is None or v.value == v.focus or v.shape is None or not removed:
        return False
    path = ctx.param(v.shape, "path")
    return path is not None and value_triple(ctx, v.focus, path, v.value) in removed


def _touched(node, delta: set) -> bool:
    """True when `node` is the subject or object of a triple in `delta`."""
    return node is not None and any(node in (t[0], t[2]) for t in delta)
