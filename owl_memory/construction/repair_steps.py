"""Repair steps a construction agent takes one at a time, on the session's repair session (repair.RepairSession):
the candidates for one signature, offered as ids, and applying one.

For a violation signature the last verification found, the candidates are the repair session's: compiled decisions
from memory first (concrete signature, then abstract keys; each signature looked up in memory once per sprint), then
the library's strategies, each checked against repair's minimal-change rules. For a competency question's signature
(`cq:…`, from cq_status) the candidate is its compiled answer from memory. Applying a candidate makes one delta and
verifies the nodes it touched; what cleared its violation is compiled at the end of the sprint
(construction/distillation.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice

from ..errors import ToolError
from ..model.operators import APPLY_DELTA, canonical
from ..repair import Candidate, Step, VerifyResult
from .compiled_answers import cq_signature, stored_answer
from .cq import CompetencyQuestion, evaluate
from .workspace import Delta

MAX_CANDIDATES = 8  # candidates one listing offers
MAX_TRIED = 32  # patches looked at per violation when applying a candidate


@dataclass(frozen=True)
class Offer:
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
    """Candidates offered and applied in one construction session, through its repair session.

    Args:
        session: the ConstructionSession the steps change.
    """

    def __init__(self, session) -> None:  # a ConstructionSession: not annotated, as session.py imports this module
        """No candidate offered yet."""
        self.session = session
        self.known: dict[str, Offer] = {}
        self.ids: dict[tuple, str] = {}
        self.steps: dict[str, Step] = {}  # delta key -> the repair step that made it (workspace_undo takes it back)
        self.used: list[str] = []  # compiled memory items applied, in order

    # ---- offering ----
    def candidates(self, signature: str) -> list[Offer]:
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
        rs = self.session.repair_session
        rs.round(violations)
        offered = []
        for c in rs.candidates(mine[0], {x.focus for x in violations}):
            found = self._register(signature, c, len(mine))
            if found not in offered:
                offered.append(found)
            if len(offered) == MAX_CANDIDATES:
                break
        self._done()
        return offered

    def _answers(self, signature: str) -> list[Offer]:
        """The compiled answer of the failing CQ with this signature, when memory holds one."""
        cq, memory = self._cq(signature), self.session.memory
        if any(r.id == cq.id and r.passed for r in self.session.results) or not self.session.use_memory \
                or memory is None:
            return []
        found = stored_answer(memory, cq)
        if found is None:
            return []
        op, added, removed = found
        ident = (signature, APPLY_DELTA, op.id, "", False)
        cid = self.ids.setdefault(ident, f"c{len(self.ids) + 1}")
        self.known[cid] = Offer(cid, signature, APPLY_DELTA, "memory", op.id, signature, "", 0, len(added),
                                len(removed), 0)
        return [self.known[cid]]

    def _cq(self, signature: str) -> CompetencyQuestion:
        """The competency question a cq: signature names; ToolError otherwise."""
        cq = next((c for c in self.session.sprint.cqs if cq_signature(c) == signature), None)
        if cq is None:
            raise ToolError("no competency question has that signature; cq_status() lists each one's signature")
        return cq

    def _register(self, signature: str, c: Candidate, count: int) -> Offer:
        """The offer of a candidate (the same id each time the same strategy, choice and source come up)."""
        p, follow = c.patch, len(c.follow_ups)
        ident = (signature, p.operator, c.item, canonical(p.choice), bool(follow))
        cid = self.ids.setdefault(ident, f"c{len(self.ids) + 1}")
        self.known[cid] = Offer(cid, signature, p.operator, "memory" if c.item else "library", c.item, c.memory_key,
                                canonical(p.choice), follow, len(p.added), len(p.removed), count)
        return self.known[cid]

    # ---- applying ----
    def apply(self, candidate_id: str, focus: str | None = None) -> RepairOutcome:
        """Apply one offered candidate (to every open violation of its signature, or the one at `focus`) as one
        delta and verify the nodes it touched; ToolError when it is unknown or gives no allowed change."""
        offer = self.known.get(str(candidate_id).strip())
        if offer is None:
            raise ToolError("unknown candidate id; pass an 'id' that repair_candidates returned")
        if offer.operator == APPLY_DELTA:
            return self._apply_answer(offer)
        s, rs = self.session, self.session.repair_session
        violations = s.open_violations()
        mine = [v for v in violations if v.signature == offer.signature]
        if focus:
            node = s.node(focus)
            mine = [v for v in mine if v.focus == node]
        if not mine:
            raise ToolError("no open violation of this candidate's signature is left" + (" at that focus node" if focus
                            else "") + "; call workspace_verify() for what is open")
        rs.round(violations)
        chosen = self._choose(offer, mine, {x.focus for x in violations})
        self._done()
        if not chosen:
            raise ToolError("this candidate gives no change the minimal-change rules allow here; try another one")
        step = rs.apply(chosen, note=f"repair {offer.operator}")
        delta = s.record(step.change, "repair")
        if delta is None:
            raise ToolError("this candidate's change is in the graph already; call workspace_verify()")
        result = self._check(step.focus)
        cleared, _ = rs.settle(step, result)
        self._count(chosen, cleared)
        self.steps[delta.ref.key] = step
        before, now = {v.key for v in violations}, s.baseline.mine(result.violations)
        return RepairOutcome(offer.id, delta, len(chosen), len(cleared),
                             sum(v.signature == offer.signature for v in now), sum(v.key not in before for v in now))

    def _choose(self, offer: Offer, mine: list, near: set) -> list[Candidate]:
        """One allowed, non-clashing candidate of the offer's strategy per violation."""
        chosen: list[Candidate] = []
        added: set = set()
        removed: set = set()
        for v in mine:
            options = [c for c in islice(self.session.repair_session.candidates(v, near), MAX_TRIED)
                       if c.patch.operator == offer.operator and c.item == offer.item]
            exact = [c for c in options if canonical(c.patch.choice) == offer.choice
                     and bool(c.follow_ups) == bool(offer.follow_ups)]
            c = next(iter(exact or options), None)
            if c is None or c.patch.clashes(added, removed):
                continue
            chosen.append(c)
            added, removed = added | c.patch.added, removed | c.patch.removed
        return chosen

    def _apply_answer(self, offer: Offer) -> RepairOutcome:
        """Apply a compiled CQ answer as one delta, verify what it touched, and record the use on its operator."""
        s, memory = self.session, self.session.memory
        assert memory is not None  # compiled answers are offered only from a memory (_answers)
        cq = self._cq(offer.signature)
        found = stored_answer(memory, cq)
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
        touched = {t[0] for t in fresh}
        result = self._check(s.repair_session.near(fresh, gone, touched)) if delta is not None else s.view()
        new = [v for v in (s.baseline.mine(result.violations) if result else []) if v.focus in touched
               and v.key not in before]
        passes = evaluate(cq, s.ws.working).passed
        memory.record_use(op.id, passes and not new)
        self.used.append(op.id)
        s.counts.compiled_used += 1
        s.counts.compiled_verified += passes and not new
        return RepairOutcome(offer.id, delta, 1, int(passes), 0, len(new), passes)

    def _check(self, focus: frozenset | None) -> VerifyResult:
        """Verify what a delta touched, `focus` (one counted run; the whole graph when the shapes need it or nothing
        current is known), and take the result in."""
        s = self.session
        prior = s.view(s.ws.versions[-2].key)
        s.counts.verify_runs += 1
        return s.verified(s.repair_session.verify(None if prior is None else focus, prior=prior))

    # ---- shared ----
    def _done(self) -> None:
        """Note the nested trial checks the repair session's strategies have run."""
        self.session.counts.nested_checks = self.session.repair_session.checks.count

    def _count(self, chosen: list[Candidate], cleared: list[Candidate]) -> None:
        """Count a repair step and the compiled items it applied (their uses are recorded by the repair session)."""
        s, ok = self.session, {id(c) for c in cleared}
        s.counts.repairs_applied += 1
        s.counts.repairs_verified += len(cleared) == len(chosen)
        for c in chosen:
            if c.item is not None:
                self.used.append(c.item)
                s.counts.compiled_used += 1
                s.counts.compiled_verified += id(c) in ok
