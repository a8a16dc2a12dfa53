"""One repair session over a working graph: the steps every repair takes, whoever drives it.

The repair command's loop (repair.loop), the symbolic sprint (through `repair`) and a construction agent's tools
(repair_candidates, repair_apply, workspace_undo) all take the same steps: verify, list the candidates for a
violation, apply candidates as one change, settle what the re-verification says, undo. What memory holds for a
violation signature is looked up once per session (repair.recall) and read by every later step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from rdflib import Graph

from ..model import Violation
from .candidates import Candidates
from .compiling import compile_decisions
from .context import Context
from .guards import Guards
from .patch import Candidate
from .proposed import OPERATOR as PROPOSED
from .recall import Recall
from .registry import ranked_candidates
from .verification import NestedChecks, VerifyResult, delta_focus, verify

if TYPE_CHECKING:
    from ..store import Memory


@dataclass(frozen=True)
class Step:
    """Candidates applied as one change.

    Args:
        candidates: the candidates, one per violation they repair.
        focus: the nodes whose results the change can alter, the candidates' focus nodes among them (None: only a
            whole-graph verification is sound).
        change: what the session's edit returned (a construction workspace's delta; None for a plain graph).
    """

    candidates: tuple[Candidate, ...]
    focus: frozenset | None
    change: Any = None


class RepairSession:
    """Verify, candidates for a violation, apply, settle, undo: one repair's steps over a working graph.

    Args:
        graph: the working graph; every change goes through `edit`, which must change this graph.
        shapes: the shapes graph (never modified).
        guards: the minimal-change rules that hold now (called at each step: a workspace's change with its version).
        memory: the memory uses are recorded in and verified decisions compiled into (None: none).
        use_memory: offer the memory's compiled operators (False: the library alone, still compiling into memory).
        proposer: asked once per violation when nothing else is left (None: off).
        keep_values: never drop an offending value, replace or complete it.
        blobs: where a verification's report is kept when asked (None: nowhere).
        edit: (added, removed, note) -> what it made; applies a change to `graph` (default: in place, None).
    """

    def __init__(self, graph: Graph, shapes: Graph, guards: Callable[[], Guards], *, memory: Memory | None = None,
                 use_memory: bool = True, proposer=None, keep_values: bool = False, blobs=None,
                 edit: Callable[[set, set, str], Any] | None = None) -> None:
        """Nothing verified, offered or applied yet."""
        self.graph, self.shapes, self.guards, self.memory, self.blobs = graph, shapes, guards, memory, blobs
        self.recall = Recall(memory if use_memory else None, shapes)
        self.source = Candidates(self.recall, lambda: self.guards().protected, proposer, memory)
        self.checks = NestedChecks(shapes)
        self.ctx = Context(graph, shapes, checks=self.checks, keep_values=keep_values,
                           learned=self.recall.learned if self.recall.memory is not None else None)
        self.edit = edit or self._in_place
        self.last: VerifyResult | None = None
        self.scopes: list[str] = []  # the scope of each verification ("full" or "focus")
        self.failed: dict = {}  # violation key -> fingerprints of its patches that are not offered again
        self.worked: list[Candidate] = []  # candidates that cleared their violation and were not undone, in order

    # ---- verify ----
    def verify(self, focus=None, *, prior: VerifyResult | None = None, store: bool = False) -> VerifyResult:
        """One verification of the working graph, only `focus` when that is sound (repair.verification), merged then
        with `prior` (the session's last verification by default) outside the focus; `store` keeps its report."""
        r = verify(self.graph, self.shapes, focus=focus, blobs=self.blobs if store else None)
        self.scopes.append(r.scope)
        known = prior if prior is not None else self.last
        if r.scope == "focus" and known is not None:
            keep = [v for v in known.violations if v.focus not in focus]
            r.violations = sorted(keep + r.violations, key=lambda v: v.key)
            r.violation_count, r.conforms = len(r.violations), not r.violations
        self.last = r
        return r

    # ---- candidates ----
    def round(self, violations: list[Violation]) -> None:
        """Take in the violations a verification reported: the context candidates are made in flags their values
        (some other constraint rejects them) and knows their keys."""
        self.ctx = replace(self.ctx, flagged=frozenset((v.focus, v.value) for v in violations if v.value is not None),
                           reported=frozenset(v.key for v in violations))

    def candidates(self, v: Violation, near: set, cheap: bool = False) -> Iterator[Candidate]:
        """The candidates for `v`, lazily, in the order to try them (compiled decisions from memory first, then the
        library, then the proposer: repair.candidates) that the minimal-change rules allow while the nodes `near` are
        repaired and that are not refused for `v`; `cheap`: only the library's strategies that run no trial check."""
        guards, refused = self.guards(), self.failed.get(v.key, set())
        found = (Candidate(v, p) for _, p in ranked_candidates(self.ctx, v, cheap=True)) if cheap else \
            self.source.of(self.ctx, v)
        return (c for c in found if c.patch.fingerprint not in refused and guards.allow(self.graph, c.patch, near))

    # ---- apply ----
    def apply(self, chosen: Iterable[Candidate], note: str = "repair") -> Step:
        """Apply candidates as one edit (candidates that do not clash: Patch.clashes)."""
        chosen = tuple(chosen)
        added = frozenset(t for c in chosen for t in c.patch.added)
        removed = frozenset(t for c in chosen for t in c.patch.removed)
        change = self.edit(set(added), set(removed), note)
        return Step(chosen, self.near(added, removed, {c.violation.focus for c in chosen}), change)

    def near(self, added, removed, foci: set) -> frozenset | None:
        """The nodes whose results a change can alter, `foci` among them; None when only a whole-graph run is sound."""
        found = delta_focus(self.graph, added, removed)
        return None if found is None else frozenset(found | foci)

    def settle(self, step: Step, result: VerifyResult) -> tuple[list[Candidate], list[Candidate]]:
        """(cleared, failed) candidates of a step by the verification after it: cleared when its violation is gone (a
        proposal: when its focus has no violation of that signature left). Records each use of a compiled item and
        of the follow-ups folded into a patch in memory; the cleared ones count as worked."""
        still = {v.key for v in result.violations}
        near = {(v.focus, v.signature) for v in result.violations}
        cleared = [c for c in step.candidates if c.violation.key not in still
                   and (c.patch.operator != PROPOSED or (c.violation.focus, c.violation.signature) not in near)]
        ok = {id(c) for c in cleared}
        for c in step.candidates:
            for item in (*c.follow_ups, *([c.item] if c.item is not None else [])):
                self.recall.record(item, id(c) in ok)
        self.worked += cleared
        return cleared, [c for c in step.candidates if id(c) not in ok]

    # ---- undo ----
    def undo(self, candidates: Iterable[Candidate], keep: frozenset = frozenset(), note: str = "undo") -> Any:
        """Take candidates back in one edit: remove what their patches added (but `keep`), restore what they removed;
        they no longer count as worked. Returns what the edit made."""
        back = list(candidates)
        gone = {id(c) for c in back}
        self.worked = [c for c in self.worked if id(c) not in gone]
        return self.edit({t for c in back for t in c.patch.removed},
                         {t for c in back for t in c.patch.added} - keep, note)

    def refuse(self, c: Candidate) -> None:
        """Never offer this candidate's patch for its violation again in this session."""
        self.failed.setdefault(c.violation.key, set()).add(c.patch.fingerprint)

    # ---- compile ----
    def compile(self, run_id: str, report_key: str, skip: set) -> list[str]:
        """Compile what worked (but signatures under `skip`) into memory; the ids of the new RepairOperators."""
        if self.memory is None or not self.worked:
            return []
        return compile_decisions(self.memory, self.shapes, self.worked, skip, self.source.searched, run_id, report_key)

    def _in_place(self, added: set, removed: set, note: str) -> None:
        """Change the working graph itself: remove, then add."""
        for t in removed:
            self.graph.remove(t)
        for t in added:
            self.graph.add(t)
