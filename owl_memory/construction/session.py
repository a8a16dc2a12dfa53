"""The state a construction agent changes through its tools: one sprint's workspace, what verification last found,
the deltas the agent applied and undid, and the counters its summary reports.

Every change is a delta (a "delta" handle) checked by repair's minimal-change rules first: seed triples and the
types that make a node a target of a shape are never removed, no node stops being a target, the baseline's focus
nodes are not edited. A refused change changes nothing. Recoverable failures raise ToolError, the "[Error] …" the
model reads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from rdflib import URIRef

from ..errors import ToolError
from ..model import Violation
from ..repair import Guards, Patch, RepairSession, VerifyResult, applied, target_nodes
from ..store import BlobStore, PayloadStore
from .baseline import Baseline
from .cq import CompetencyQuestion, CQResult, evaluate_all
from .delta_input import parse_delta
from .repair_steps import RepairSteps
from .sprint_file import Sprint, merged
from .workspace import Delta, Workspace

if TYPE_CHECKING:
    from ..store import Memory

STANDARD = {"rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#", "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
            "owl": "http://www.w3.org/2002/07/owl#", "xsd": "http://www.w3.org/2001/XMLSchema#"}
MAX_VIEWS = 16  # verified versions a session remembers


@dataclass
class SessionCounts:
    """What a construction agent did: verifications, deltas applied and undone, repairs and compiled operators.

    Args:
        verify_runs: pySHACL verifications the agent caused (workspace_verify, and each repair_apply's check).
        nested_checks: nested trial checks repair strategies ran while offering candidates.
        deltas_applied: deltas the agent's changes made (workspace_apply, repair_apply); deltas_undone: undone.
        refused: changes refused by the minimal-change rules or the input checks (nothing changed).
        repairs_applied, repairs_verified: repair candidates applied, and those that cleared their violations.
        compiled_used, compiled_verified: compiled operators from memory applied, and those that verified.
    """

    verify_runs: int = 0
    nested_checks: int = 0
    deltas_applied: int = 0
    deltas_undone: int = 0
    refused: int = 0
    repairs_applied: int = 0
    repairs_verified: int = 0
    compiled_used: int = 0
    compiled_verified: int = 0

    def to_dict(self) -> dict:
        """JSON-compatible form."""
        return asdict(self)


class ConstructionSession:
    """One sprint's workspace as an agent works on it.

    Args:
        sprint: the Sprint (seed ontology, shapes, CQs, namespace, baseline policy).
        memory: the Memory holding versions, deltas, reports and compiled operators (None: blobs in memory only).
        use_memory: offer compiled operators and answers from memory (False under condition A0).
        keep_seed: seed triples are never removed (a sprint); False for a repair case, whose seed is the data.
        keep_values: repair never drops an offending value, it replaces or completes it.
        progress: called with a one-line text after each step (for displays).
    """

    def __init__(self, sprint: Sprint, memory: Memory | None = None, *, use_memory: bool = True, keep_seed: bool = True,
                 keep_values: bool = False, progress: Callable[[str], None] | None = None):
        """Open the workspace over the seed and shapes and verify the seed once (the baseline)."""
        self.sprint, self.memory = sprint, memory
        self.use_memory = use_memory and memory is not None
        self.keep_seed, self.keep_values = keep_seed, keep_values
        self.blobs: PayloadStore = memory.blobs if memory is not None else BlobStore(":memory:")
        self.ws = Workspace(self.blobs, merged(sprint.ontology), merged(sprint.shapes))
        self.prefixes = declared_prefixes(self.ws, sprint.cqs)
        self.baseline = Baseline.check(self.ws, sprint.baseline, self.blobs)
        self.counts = SessionCounts()
        self.progress = progress or (lambda text: None)
        self.applied: dict[str, Delta] = {}  # delta key -> delta made by this session's tools
        self.undone: dict[str, str | None] = {}  # delta key -> key of the delta that reverted it (None: no change)
        self.views: dict[str, VerifyResult] = {}  # version key -> what verification found on it (latest few)
        self.results: list[CQResult] = evaluate_all(sprint.cqs, self.ws.working)
        self.flips: dict[str, str] = {}  # cq id -> key of the delta that last made it pass
        self._guards: tuple[str, Guards] | None = None  # the current version's key and its guards
        self.repair_session = RepairSession(  # every verification and repair step goes through it
            self.ws.working, self.ws.shapes, self.guards, memory=memory, use_memory=self.use_memory,
            keep_values=keep_values, blobs=self.blobs,
            edit=lambda added, removed, note: self.ws.apply(added, removed, note=note))
        self.repairs = RepairSteps(self)  # the agent's repair_candidates / repair_apply on that session
        self.final_checks = 0  # verifications made after the agent stopped, to judge its result

    # ---- competency questions ----
    def cq(self, cq_id) -> CompetencyQuestion:
        """The competency question with this id; ToolError naming the ids otherwise."""
        found = next((c for c in self.sprint.cqs if c.id == str(cq_id).strip()), None)
        if found is None:
            ids = ", ".join(c.id for c in self.sprint.cqs[:20]) or "none"
            raise ToolError(f"no competency question has that id; the ids are: {ids}")
        return found

    # ---- changes ----
    def apply(self, added, removed="") -> Delta:
        """Apply Turtle `added` and `removed` as one delta, all or nothing; ToolError (nothing changed) when a
        triple is malformed, protected, absent from the graph (removed) or the change is empty."""
        try:
            add = parse_delta(added, self.prefixes, "added", self.sprint.namespace)
            rem = parse_delta(removed, self.prefixes, "removed", self.sprint.namespace)
        except ToolError:
            self.counts.refused += 1
            raise
        if set(add) & set(rem):
            raise self.refuse("the same triple is both added and removed; list it once")
        if not add and not rem:
            raise self.refuse("added and removed are both empty; pass Turtle of the triples to add")
        absent = [t for t in rem if t not in self.ws.working]
        if absent:
            raise self.refuse(f"{len(absent)} of the {len(rem)} triples to remove are not in the working graph; "
                              "remove only triples it holds (a literal must match its datatype and language too)")
        fresh = [t for t in add if t not in self.ws.working]
        if not fresh and not rem:
            raise self.refuse(f"every one of the {len(add)} added triples is in the working graph already; no delta "
                              "was made")
        self.check_change(fresh, rem)
        delta = self.record(self.ws.apply(fresh, rem, note="agent"), "apply")
        assert delta is not None  # fresh or rem is non-empty and changes the working graph
        return delta

    def check_change(self, added, removed) -> None:
        """ToolError (and a refusal counted) when a change breaks a minimal-change rule."""
        frozen = self.baseline.frozen
        if any(t[0] in frozen for t in [*added, *removed]):
            raise self.refuse("the change edits a node whose violations predate the sprint (its baseline); the "
                              "sprint leaves those nodes alone")
        if not removed:
            return
        guards = self.guards()
        hit = set(removed) & guards.protected
        if hit:
            raise self.refuse(f"{len(hit)} of the triples to remove are protected (seed triples, shape triples, or "
                              "types that make a node a target of a shape); minimal change never removes them: add "
                              "what is missing instead, or take back a delta of yours with workspace_undo(delta)")
        after = applied(self.ws.working, Patch("agent", frozenset(added), frozenset(removed)))
        lost = guards.targets - target_nodes(after, self.ws.shapes)
        if lost:
            raise self.refuse(f"the change makes {len(lost)} node(s) stop being targets of a shape, which dodges "
                              "the shape instead of meeting it; keep their types")

    def guards(self) -> Guards:
        """Repair's minimal-change rules over the current working graph (the seed protected when kept, the baseline's
        focus nodes frozen), made once per version."""
        head = self.ws.head.key
        if self._guards is None or self._guards[0] != head:
            seed = frozenset(self.ws.base) if self.keep_seed else frozenset()
            self._guards = (head, Guards(self.ws.working, self.ws.shapes, seed, self.baseline.frozen))
        return self._guards[1]

    def refuse(self, message: str) -> ToolError:
        """A ToolError for a refused change, counted; says that nothing changed."""
        self.counts.refused += 1
        return ToolError(f"{message} (nothing was changed)")

    def record(self, delta: Delta | None, kind: str) -> Delta | None:
        """Note a delta the tools made (undoable, counted), re-check the CQs and report the step."""
        if delta is None:
            return None
        self.applied[delta.ref.key] = delta
        self.counts.deltas_applied += kind != "undo"
        before = {r.id for r in self.results if r.passed}
        self.results = evaluate_all(self.sprint.cqs, self.ws.working)
        for r in self.results:
            if r.passed and r.id not in before:
                self.flips[r.id] = delta.ref.key
        self.progress(f"{kind}: +{delta.added} -{delta.removed}, {sum(r.passed for r in self.results)}/"
                      f"{len(self.results)} CQs pass")
        return delta

    def undo(self, key) -> Delta | None:
        """Revert one delta this session made (remove what it added, restore what it removed) as a new delta;
        None when later deltas already changed it all back. ToolError for an unknown or undone handle."""
        key = str(key or "").strip()
        if key in self.undone:
            raise ToolError("that delta is undone already; undo the delta its undo made to redo it")
        delta = self.applied.get(key)
        if delta is None:
            kind = "a version handle, not a delta" if any(v.key == key for v in self.ws.versions) else "unknown here"
            raise ToolError(f"that handle is {kind}; pass a 'delta' value workspace_apply, repair_apply or "
                            "workspace_undo returned in this sprint")
        note, step = f"undo {key[7:19]}", self.repairs.steps.get(key)
        if step is not None:  # a repair step's: the repair session takes its candidates back
            revert = self.repair_session.undo(step.candidates, note=note)
        else:
            added, removed = self.ws.delta_triples(delta)
            revert = self.ws.apply(added=removed, removed=added, note=note)
        self.undone[key] = revert.ref.key if revert is not None else None
        self.counts.deltas_undone += 1
        self.record(revert, "undo")
        return revert

    # ---- verification ----
    def verify(self) -> VerifyResult:
        """Verify the whole working graph (one counted pySHACL run, its report stored as a handle)."""
        self.counts.verify_runs += 1
        return self.verified(self.repair_session.verify(store=True))

    def verified(self, result: VerifyResult) -> VerifyResult:
        """Take in a verification of the current version (a focus-scoped one merged already with what was known of
        the version before, outside the focus)."""
        self.views[self.ws.head.key] = result
        while len(self.views) > MAX_VIEWS:
            self.views.pop(next(iter(self.views)))
        self.progress(f"verify: {len(self.baseline.mine(result.violations))} violation(s) in scope")
        return result

    def view(self, version: str | None = None) -> VerifyResult | None:
        """What verification found on a version (the current one by default), if it was verified; versions are
        content-addressed, so an undo back to a verified graph finds that verification again."""
        return self.views.get(version or self.ws.head.key)

    def final_view(self) -> VerifyResult:
        """What verification found on the final version: the agent's own check when it verified it, else one more
        run (its report stored; counted in final_checks, not in the agent's verify runs)."""
        view = self.view()
        if view is None:
            self.final_checks += 1
            view = self.verified(self.repair_session.verify(store=True))
        return view

    def open_violations(self) -> list[Violation]:
        """The sprint's violations as verification found them on the current version; ToolError when it was not
        verified."""
        view = self.view()
        if view is None:
            raise ToolError("the graph changed since the last verification (workspace_apply or workspace_undo); "
                            "call workspace_verify() first" if self.views else
                            "nothing is verified yet; call workspace_verify() first")
        return self.baseline.mine(view.violations)

    def node(self, text) -> URIRef:
        """A focus node named by a full IRI, <IRI>, or a prefixed name the workspace declares."""
        text = str(text).strip().strip("<>")
        prefix, sep, local = text.partition(":")
        if sep and prefix in self.prefixes and not local.startswith("//"):
            return URIRef(self.prefixes[prefix] + local)
        return URIRef(text)

    @property
    def succeeded(self) -> bool:
        """Every CQ passes and verification of the current version found nothing in scope."""
        view = self.view()
        return all(r.passed for r in self.results) and view is not None and not self.baseline.mine(view.violations)


def declared_prefixes(ws: Workspace, cqs: list[CompetencyQuestion]) -> dict:
    """Prefixes a model's Turtle may use undeclared: rdf, rdfs, owl, xsd, those the seed and shapes files bind to a
    namespace they use, and the competency questions' (later ones win)."""
    used = {str(x) for g in (ws.base, ws.shapes) for t in g for x in t if isinstance(x, URIRef)}
    out = dict(STANDARD)
    for g in (ws.base, ws.shapes):
        for prefix, ns in g.namespaces():
            if prefix and any(u.startswith(str(ns)) for u in used):
                out[prefix] = str(ns)
    for cq in cqs:
        out.update(cq.prefixes)
    return dict(sorted(out.items()))
