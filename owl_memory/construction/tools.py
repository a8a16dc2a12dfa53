"""Construction tools: a model builds an ontology from competency questions through handles and counts, never
graphs. cq_status / cq_check say which CQs pass; workspace_apply takes Turtle and returns a delta handle;
workspace_verify returns conformance, signatures, focus nodes and a report handle; repair_candidates and repair_apply
offer and apply repair's candidates (compiled operators from memory first); workspace_undo reverts a delta.

Offered when a ConstructionSession (owl_memory/construction/session.py) is bound: `session_tools(session)` gives the
list for dspy.RLM, and the agentic sprint binds its session around the run (`bound`). The ontology tools then read
the working graph: each change restarts their query worker and recounts their lists.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

from rdflib import Graph, URIRef
from rdflib.namespace import OWL, RDF, RDFS

from ..adapters import sparql as sparql_text
from ..agent import (
    CLASS_TYPES,
    DEFAULT_ACCESS,
    PROPERTY_TYPES,
    OntologyTools,
    OwlTool,
    Toolbox,
    ToolFamily,
    as_text,
    clip,
    family,
)
from ..model import Construction, MemoryAccess
from .compiled_answers import cq_signature
from .session import ConstructionSession
from .workspace import Delta

if TYPE_CHECKING:
    from ..store import Memory

SESSION: ContextVar[ConstructionSession | None] = ContextVar("owl_memory_construction_session", default=None)
MAX_CQS = 40  # competency questions one status lists
MAX_FOCUS = 10  # focus nodes one verification lists
LIST_CHARS = 1_000  # serialized characters the signatures of one verification may take
UNSEEN = 5  # terms a workspace_apply names that the seed, the shapes and the CQs never use
HIDDEN = ("query", "question", "report_text")  # what the trajectory's construction events leave out


@contextmanager
def bound(session: ConstructionSession) -> Iterator[None]:
    """Bind `session` while toolboxes are made inside the block: their construction tools work on it."""
    token = SESSION.set(session)
    try:
        yield
    finally:
        SESSION.reset(token)


def session_tools(session: ConstructionSession, memory: Memory | None = None,
                  access: MemoryAccess = DEFAULT_ACCESS) -> list[OwlTool]:
    """The construction tools over `session`, with the memory tools (when `memory` and `access` grant them), the
    ontology tools over its working graph and the handle tools: OwlTool objects for dspy.RLM(sig, tools=...)."""
    with bound(session):
        box = Toolbox(memory, ontology=session.ws.working, access=access, blobs=session.blobs)
    return box.functions()


@family
class ConstructionTools(ToolFamily):
    """One sprint's workspace: competency questions, deltas, verification, repair candidates, undo."""

    order = 5
    names = ("cq_status", "cq_check", "workspace_stats", "workspace_apply", "workspace_verify", "repair_candidates",
             "repair_apply", "workspace_undo")

    def __init__(self, box: Toolbox):
        """Tools over the session bound when the toolbox is made (none: the family is not offered)."""
        super().__init__(box)
        self._bound = SESSION.get()
        self._known: set[URIRef] | None = None  # IRIs the seed, the shapes and the CQs name (computed on first use)

    def offered(self) -> bool:
        """Only while a construction session is bound."""
        return self._bound is not None

    @property
    def session(self) -> ConstructionSession:
        """The session bound when the toolbox was made."""
        assert self._bound is not None  # the toolbox lists this family's tools only when offered() says one is bound
        return self._bound

    def cq_status(self) -> dict | str:
        """Every competency question: id, passed, row_count (ASK: 1 or 0; no rows are shown) and signature (for
        repair_candidates: memory may hold its compiled answer)."""
        s = self.session
        rows = [{"id": cq.id, "passed": r.passed, "row_count": int(r.observed), "signature": cq_signature(cq)}
                for cq, r in zip(s.sprint.cqs, s.results, strict=True)]
        return self._step("cq_status", {"passed": sum(r["passed"] for r in rows), "total": len(rows),
                                        "cqs": rows[:MAX_CQS]})

    def cq_check(self, cq_id: str) -> dict | str:
        """One competency question: its question, SPARQL query, prefixes, what it expects and whether it passes."""
        s = self.session
        cq = s.cq(as_text(cq_id, "cq_id"))
        r = next(r for r in s.results if r.id == cq.id)
        return self._step("cq_check", {
            "id": cq.id, "question": clip(cq.question, 300), "query": clip(cq.query, 1_000), "kind": cq.kind,
            "expected": clip(json.dumps(cq.expected, default=str), 200), "passed": r.passed,
            "row_count": int(r.observed),            "signature": cq_signature(cq)})

    def workspace_stats(self) -> dict | str:
        """Sizes of the working graph, the prefixes your Turtle may use undeclared, the namespace to mint new nodes
        under, the current version handle, and deltas applied and undone."""
        s = self.session
        g = s.ws.working
        classes = {c for t in CLASS_TYPES for c in g.subjects(RDF.type, t)}
        properties = {p for t in PROPERTY_TYPES for p in g.subjects(RDF.type, t)}
        return self._step("workspace_stats", {
            "triples": len(g), "seed_triples": len(s.ws.base), "classes": len(classes), "properties": len(properties),
            "namespace": s.sprint.namespace, "prefixes": dict(list(s.prefixes.items())[:16]),
            "version": s.ws.head.key, "versions": len(s.ws.versions), "deltas_applied": s.counts.deltas_applied,
            "deltas_undone": s.counts.deltas_undone})

    def workspace_apply(self, added: str, removed: str = "") -> dict | str:
        """Add (and remove) triples given as Turtle, all or nothing, as one delta; the prefixes of workspace_stats
        are declared for you, blank nodes are refused (mint IRIs). Returns the delta handle (for workspace_undo) and
        sizes. Seed triples and the types that make a node a target of a shape are never removed."""
        delta = self.session.apply(added, removed)
        self._changed()
        added_triples, _ = self.session.ws.delta_triples(delta)
        out = {**self._delta(delta), "unseen_terms": self._unseen(added_triples)}
        if out["unseen_terms"]:
            out["note"] = "these terms occur in neither the seed, the shapes nor the CQs: check their prefixes"
        return self._step("workspace_apply", out)

    def workspace_verify(self) -> dict | str:
        """Validate the working graph with SHACL: conforms, violation_count, signatures (signature -> count), the
        first focus nodes and `report`, a handle to the full report (read it with handle_window). Violations that
        predate the sprint (its baseline) are left out and counted in baseline_excluded."""
        s = self.session
        result = s.verify()
        mine = s.baseline.mine(result.violations)
        counts = Counter(v.signature for v in mine)
        focus = sorted({str(v.focus) for v in mine})
        report = result.report_ref
        out = {"conforms": not mine, "violation_count": len(mine), "signatures": dict(sorted(counts.items())),
               "focus_nodes": focus, "report": report.key if report else None,
               "baseline_excluded": len(result.violations) - len(mine)}
        if self.box.access.uncapped:  # the negative control: the whole report inline
            assert report is not None  # the session's verify() stores every report
            self.box.watch(report.key)
            return self._step("workspace_verify", {**out, "report_text": s.blobs.load(report)})
        return self._step("workspace_verify", _capped(out, len(counts), len(focus)))

    def repair_candidates(self, signature: str) -> dict | str:
        """Repair candidates for one signature from workspace_verify (or a cq: signature from cq_status): compiled
        operators from memory first, then the library's strategies, as ids with one-line summaries."""
        found = self.session.repairs.candidates(as_text(signature, "signature"))
        out: dict[str, object] = {"candidates": [c.to_dict() for c in found]}
        if not found:
            out["note"] = "no candidate: write the missing triples yourself with workspace_apply"
        return self._step("repair_candidates", out)

    def repair_apply(self, candidate_id: str, focus: str | None = None) -> dict | str:
        """Apply one candidate from repair_candidates as one delta, to every open violation of its signature or only
        the one at `focus` (an IRI); verifies the nodes it touched. verified=false: undo it with workspace_undo."""
        outcome = self.session.repairs.apply(as_text(candidate_id, "candidate_id"), as_text(focus, "focus") or None)
        self._changed()
        out = {**(self._delta(outcome.delta) if outcome.delta is not None else {"delta": None}),
               "verified": outcome.verified, "applied_to": outcome.applied_to, "cleared": outcome.cleared,
               "remaining": outcome.remaining, "new_violations": outcome.new_violations}
        return self._step("repair_apply", out)

    def workspace_undo(self, delta: str) -> dict | str:
        """Revert one delta you applied (remove what it added, restore what it removed) as a new delta; undoing that
        one redoes the first."""
        key = as_text(delta, "delta").strip()
        revert = self.session.undo(key)
        self._changed()
        made = self._delta(revert) if revert is not None else {
            "delta": None, "note": "later deltas had changed it all back already", **self._sizes()}
        return self._step("workspace_undo", {"undone": key, **made})

    # ---- helpers ----
    def _delta(self, delta: Delta) -> dict:
        """What a change returns: the delta handle, its sizes, the new version and the CQs passing."""
        return {"delta": delta.ref.key, "added": delta.added, "removed": delta.removed, **self._sizes()}

    def _sizes(self) -> dict:
        """The current version, graph size and CQs passing."""
        s = self.session
        return {"version": s.ws.head.key, "triples": len(s.ws.working),
                "cqs_passed": sum(r.passed for r in s.results)}

    def _unseen(self, triples: Graph) -> list[str]:
        """Predicates and classes of some triples that the seed, the shapes and the CQs never name (outside the
        namespace new nodes are minted under)."""
        s = self.session
        if self._known is None:
            self._known = {x for g in (s.ws.base, s.ws.shapes) for t in g for x in t if isinstance(x, URIRef)}
            self._known |= {x for cq in s.sprint.cqs for x in sparql_text.named_terms(cq.prepared())}
        terms = {p for _, p, _ in triples} | {o for _, p, o in triples if p == RDF.type}
        fresh = sorted(str(x) for x in terms - self._known - {OWL.Class, RDFS.Class, OWL.NamedIndividual}
                       if isinstance(x, URIRef) and not str(x).startswith(s.sprint.namespace))
        return [clip(x, 120) for x in fresh[:UNSEEN]]

    def _changed(self) -> None:
        """After a change the ontology tools see the new working graph: their query worker restarts on the next
        query and their class and property lists are recounted."""
        for f in self.box.families:
            if isinstance(f, OntologyTools):
                f.refresh()

    def _step(self, tool: str, value: dict) -> dict:
        """Write a construction event (the result, without the CQ text or report) to the run's trajectory."""
        self.box.emit(Construction(tool, {k: v for k, v in value.items() if k not in HIDDEN}))
        return value


def _capped(out: dict, signatures: int, focus: int) -> dict:
    """A verification's return held to its lists' caps: signatures within LIST_CHARS, MAX_FOCUS focus nodes; the
    full counts kept when something is cut."""
    kept, size = {}, 0
    for sig, n in out["signatures"].items():
        size += len(json.dumps(sig)) + 6
        if size > LIST_CHARS:
            break
        kept[sig] = n
    capped = {**out, "signatures": {k: v for k, v in kept.items()}, "focus_nodes": [clip(f, 120) for f in
                                                                                    out["focus_nodes"][:MAX_FOCUS]]}
    if len(kept) < signatures or focus > MAX_FOCUS:
        capped.update(truncated=True, signatures_total=signatures, focus_nodes_total=focus)
    return capped
