"""Repair steps a construction agent takes one at a time: the candidates for one signature and applying one.

For a violation signature the last verification found, the candidates are repair's own (repair.candidates): compiled
decisions from memory first (concrete signature, then abstract keys), then the library's strategies, each checked
against repair's minimal-change rules. For a competency question's signature (`cq:…`, from cq_status) the candidate is
its compiled answer from memory. Applying a candidate makes one delta and verifies the nodes it touched; what cleared
its violation is compiled at the end of the sprint (construction/distillation.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice

from ..errors import ToolError
from ..model.operators import APPLY_DELTA, canonical
from ..repair import Candidates, Chosen, Context, NestedChecks, Patch, delta_focus, verify
from .compiled_answers import cq_signature, stored_answer
from .cq import evaluate
from .workspace import Delta

MAX_CANDIDATES = 8  # candidates one listing offers
MAX_TRIED = 32  # patches looked at per violation when applying a candidate


@dataclass(frozen=True)
class Candidate:
    """One repair candidate offered to the agent.

    Args:
        id: what repair_apply takes ("c1", "c2", … in the order first offered).
        signature: the violation (or `cq:`) signature it repairs.
        operator: the strategy id (or "apply_delta" for a compiled CQ answer).
        source: "memory" (a compiled operator) or "library".
        item: the compiled memory item's id, when from memory.
        key: the signature or abstract key the memory item was found under.
        choice: the strategy's candidate as canonical JSON (which branch, value, plan).
        follow_ups: learned follow-ups folded into the patch.
        added, removed: triples it changes at the first focus node.
        violations: open violations with this signature (what focus=None applies it to).
    """

    id: str
    signature: str
    operator: str
    source: str
    item: str | None
    key: str | None
    choice: str
    follow_ups: int
    added: int
    removed: int
    violations: int

    def to_dict(self) -> dict:
        """What the model is shown: id, source, operator, sizes and a one-line summary."""
        where = f"memory ({self.key[:60]})" if self.source == "memory" and self.key else self.source
        more = f" with {self.follow_ups} learned follow-up(s)" if self.follow_ups else ""
        return {"id": self.id, "source": self.source, "operator": self.operator, "adds": self.added,
                "removes": self.removed, "violations": self.violations,
                "summary": f"{self.operator} from {where}{more}: +{self.added} -{self.removed} triples"}


@dataclass(frozen=True)
class RepairOutcome:
    """What applying one candidate did.

    Args:
        candidate: its id; delta: the delta it made (None: nothing new to add).
        applied_to: focus nodes it changed; cleared: their violations it cleared.
        remaining: open violations with its signature afterwards.
        new_violations: violations in scope the check found that were not there before.
        passes: a compiled CQ answer: whether its competency question passes now (None otherwise).
    """

    candidate: str
    delta: Delta | None
    applied_to: int
    cleared: int
    remaining: int
    new_violations: int
    passes: bool | None = None

    @property
    def verified(self) -> bool:
        """It cleared every violation it was applied to (a compiled CQ answer: its CQ passes); violations it brought
        up (a new node's own shape, say) are counted in new_violations, not against it."""
        return bool(self.passes) if self.passes is not None else self.cleared == self.applied_to


class RepairSteps:
    """Candidates offered and applied in one session; what cleared its violation is kept for compiling.

    Args:
        session: the ConstructionSession the steps change.
    """

    def __init__(self, session) -> None:
        """No candidate offered yet."""
        self.session = session
        self.checks = NestedChecks(session.ws.shapes)
        self.known: dict[str, Candidate] = {}
        self.ids: dict[tuple, str] = {}
        self.worked: list[tuple[str, Chosen]] = []  # (delta key, patch that cleared its violation)
        self.searched: set = set()  # violation keys whose compiled replay ran trial checks
        self.used: list[str] = []  # compiled memory items applied, in order

    # ---- offering ----
    def candidates(self, signature: str) -> list[Candidate]:
        """The candidates for a signature, best first (at most MAX_CANDIDATES); ToolError for one no open violation
        or competency question has."""
        signature = signature.strip()
        if signature.startswith("cq:"):
            return self._answers(signature)
        violations = self.session.open_violations()
        mine = [v for v in violations if v.signature == signature]
        if not mine:
            raise ToolError("no open violation has that signature; pass one of the signatures workspace_verify() "
                            "returned (or a cq: signature from cq_status())")
        source = self._source()
        offered = []
        for patch, item in self._allowed(source, self._context(violations, source), mine[0], violations):
            found = self._register(signature, patch, item, source, len(mine))
            if found not in offered:
                offered.append(found)
            if len(offered) == MAX_CANDIDATES:
                break
        self._done(source)
        return offered

    def _answers(self, signature: str) -> list[Candidate]:
        """The compiled answer of the failing CQ with this signature, when memory holds one."""
        cq = self._cq(signature)
        if any(r.id == cq.id and r.passed for r in self.session.results) or not self.session.use_memory:
            return []
        found = stored_answer(self.session.memory, cq)
        if found is None:
            return []
        op, added, removed = found
        ident = (signature, APPLY_DELTA, op.id, "", False)
        cid = self.ids.setdefault(ident, f"c{len(self.ids) + 1}")
        self.known[cid] = Candidate(cid, signature, APPLY_DELTA, "memory", op.id, signature, "", 0, len(added),
                                    len(removed), 0)
        return [self.known[cid]]

    def _cq(self, signature: str):
        """The competency question a cq: signature names; ToolError otherwise."""
        cq = next((c for c in self.session.sprint.cqs if cq_signature(c) == signature), None)
        if cq is None:
            raise ToolError("no competency question has that signature; cq_status() lists each one's signature")
        return cq

    def _register(self, signature: str, patch: Patch, item, source: Candidates, count: int) -> Candidate:
        """The candidate for a patch (the same id each time the same strategy, choice and source come up)."""
        follow = len(source.follow_ups_in(patch))
        ident = (signature, patch.operator, item, canonical(patch.choice), bool(follow))
        cid = self.ids.setdefault(ident, f"c{len(self.ids) + 1}")
        self.known[cid] = Candidate(cid, signature, patch.operator, "memory" if item else "library", item,
                                    source.memory_key(item) if item else None, canonical(patch.choice), follow,
                                    len(patch.added), len(patch.removed), count)
        return self.known[cid]

    # ---- applying ----
    def apply(self, candidate_id: str, focus: str | None = None) -> RepairOutcome:
        """Apply one offered candidate (to every open violation of its signature, or the one at `focus`) as one
        delta and verify the nodes it touched; ToolError when it is unknown or gives no allowed change."""
        cand = self.known.get(str(candidate_id).strip())
        if cand is None:
            raise ToolError("unknown candidate id; pass an 'id' that repair_candidates returned")
        if cand.operator == APPLY_DELTA:
            return self._apply_answer(cand)
        violations = self.session.open_violations()
        mine = [v for v in violations if v.signature == cand.signature]
        if focus:
            node = self.session.node(focus)
            mine = [v for v in mine if v.focus == node]
        if not mine:
            raise ToolError("no open violation of this candidate's signature is left" + (" at that focus node" if focus
                            else "") + "; call workspace_verify() for what is open")
        source = self._source()
        chosen = self._choose(source, self._context(violations, source), cand, mine, violations)
        self._done(source)
        if not chosen:
            raise ToolError("this candidate gives no change the minimal-change rules allow here; try another one")
        added = {t for c in chosen for t in c.patch.added}
        removed = {t for c in chosen for t in c.patch.removed}
        delta = self.session.record(self.session.ws.apply(added, removed, note=f"repair {cand.operator}"), "repair")
        if delta is None:
            raise ToolError("this candidate's change is in the graph already; call workspace_verify()")
        result = self._check(added, removed, {c.violation.focus for c in chosen})
        still = {v.key for v in result.violations}
        cleared = [c for c in chosen if c.violation.key not in still]
        self._count(source, chosen, cleared)
        self.worked += [(delta.ref.key, c) for c in cleared]
        before = {v.key for v in violations}
        return RepairOutcome(cand.id, delta, len(chosen), len(cleared),
                             sum(v.signature == cand.signature for v in self.session.baseline.mine(result.violations)),
                             sum(v.key not in before for v in self.session.baseline.mine(result.violations)))

    def _choose(self, source: Candidates, ctx: Context, cand: Candidate, mine: list, violations: list) -> list:
        """One allowed, non-clashing patch of the candidate's strategy per violation."""
        chosen, added, removed = [], set(), set()
        for v in mine:
            options = [(p, item) for p, item in islice(self._allowed(source, ctx, v, violations), MAX_TRIED)
                       if p.operator == cand.operator and item == cand.item]
            exact = [o for o in options if canonical(o[0].choice) == cand.choice
                     and bool(source.follow_ups_in(o[0])) == bool(cand.follow_ups)]
            p, item = (exact or options or [(None, None)])[0]
            if p is None or p.removed & (added | removed) or p.added & removed:
                continue
            chosen.append(Chosen(v, p, item))
            added, removed = added | p.added, removed | p.removed
        return chosen

    def _apply_answer(self, cand: Candidate) -> RepairOutcome:
        """Apply a compiled CQ answer as one delta, verify what it touched, and record the use on its operator."""
        s = self.session
        cq = self._cq(cand.signature)
        found = stored_answer(s.memory, cq)
        if found is None:
            raise ToolError("that compiled answer's delta is gone from memory; write the triples with "
                            "workspace_apply")
        op, added, removed = found
        fresh = [t for t in added if t not in s.ws.working]
        gone = [t for t in removed if t in s.ws.working]
        s.check_change(fresh, gone)
        delta = s.record(s.ws.apply(fresh, gone, note=f"compiled answer {cq.id}"), "compiled")
        prior = s.view(s.ws.versions[-2].key) if delta is not None else None
        before = {v.key for v in prior.violations} if prior is not None else set()
        result = self._check(fresh, gone, {t[0] for t in fresh}) if delta is not None else s.view()
        touched = {t[0] for t in fresh}
        new = [v for v in (s.baseline.mine(result.violations) if result else []) if v.focus in touched
               and v.key not in before]
        passes = evaluate(cq, s.ws.working).passed
        s.memory.record_use(op.id, passes and not new)
        self.used.append(op.id)
        s.counts.compiled_used += 1
        s.counts.compiled_verified += passes and not new
        return RepairOutcome(cand.id, delta, 1, int(passes), 0, len(new), passes)

    def _check(self, added: set, removed: set, foci: set):
        """Verify what a delta touched (one counted run; the whole graph when the shapes need it or nothing current
        is known) and take the result in."""
        s = self.session
        near = delta_focus(s.ws.working, added, removed)
        prior = s.view(s.ws.versions[-2].key)
        near = None if near is None or prior is None else near | foci
        s.counts.verify_runs += 1
        return s.verified(verify(s.ws.working, s.ws.shapes, focus=near), near, prior)

    # ---- shared ----
    def _source(self) -> Candidates:
        """Repair's candidate source for this step: memory's compiled operators when the session uses memory."""
        s = self.session
        return Candidates(s.memory if s.use_memory else None, s.ws.shapes, s.guards().protected)

    def _context(self, violations: list, source: Candidates) -> Context:
        """What the strategies read: the working graph, the shapes, the run's nested checks, the open violations."""
        s = self.session
        return Context(s.ws.working, s.ws.shapes, checks=self.checks, keep_values=s.keep_values,
                       flagged=frozenset((v.focus, v.value) for v in violations if v.value is not None),
                       reported=frozenset(v.key for v in violations),
                       learned=source.learned if source.memory is not None else None)

    def _allowed(self, source: Candidates, ctx: Context, v, violations: list):
        """(patch, compiled item or None) for `v` that repair's guards allow and that leave baseline nodes alone."""
        guards, frozen = self.session.guards(), self.session.baseline.frozen
        near = {x.focus for x in violations}
        for p, item in source.of(ctx, v):
            if guards.allow(ctx.graph, p, near) and not any(t[0] in frozen for t in p.added | p.removed):
                yield p, item

    def _done(self, source: Candidates) -> None:
        """Note what a candidate source found on the way: trial checks run, compiled replays that searched."""
        self.session.counts.nested_checks = self.checks.count
        self.searched |= source.searched

    def _count(self, source: Candidates, chosen: list, cleared: list) -> None:
        """Count a repair step and record the use of each compiled item and follow-up it applied."""
        s, ok = self.session, {id(c) for c in cleared}
        s.counts.repairs_applied += 1
        s.counts.repairs_verified += len(cleared) == len(chosen)
        for c in chosen:
            for follow in source.follow_ups_in(c.patch):
                s.memory.record_use(follow, id(c) in ok)
            if c.item is not None:
                s.memory.record_use(c.item, id(c) in ok)
                self.used.append(c.item)
                s.counts.compiled_used += 1
                s.counts.compiled_verified += id(c) in ok
