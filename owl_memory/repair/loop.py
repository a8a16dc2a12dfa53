"""The repair loop: verify, patch each violation (compiled operators from memory first), re-verify, compile."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from rdflib import BNode, Graph, Literal, URIRef

from ..compiled import abstract_decision_spec, repair_decision_specs, repair_decisions, store_decisions
from ..errors import OwlMemoryError
from ..model import Item, RepairDecision
from ..model.operators import canonical
from ..rdfio import load_graph
from ..vocab import RDF, RDFS, SH
from .cascade import cascades, store_follow_up, with_follow_ups
from .patch import Context, Patch, applied
from .paths import parse
from .proposed import OPERATOR as PROPOSED
from .proposed import proposed_patch
from .registry import STRATEGIES, candidates, is_fixed_term, iter_candidates, run_strategy, strategies_for
from .verify import Violation, abstract_signatures, delta_focus, verify

_PER_INSTANCE = {"or.satisfy_branch", "xone.satisfy_one"}  # a choice without a plan (a bare index) fits one node
_DROPPERS = {SH.MaxCountConstraintComponent, SH.QualifiedMaxCountConstraintComponent, SH.UniqueLangConstraintComponent,
             SH.ClosedConstraintComponent, SH.DisjointConstraintComponent}  # may make other violations moot: first
_NESTED = {SH.NodeConstraintComponent, SH.AndConstraintComponent, SH.OrConstraintComponent, SH.XoneConstraintComponent,
           SH.NotConstraintComponent, SH.QualifiedMinCountConstraintComponent,
           SH.QualifiedMaxCountConstraintComponent}  # their operators run trial checks: last, skipped when moot
FIXED_TERM = "the focus node is a fixed term named by the shapes"


@dataclass
class RepairResult:
    """What a repair did and where it ended.

    Args:
        graph: the repaired data graph (a copy; the input is never modified).
        added: triples the repair added.
        removed: triples the repair removed.
        conforms: True when the last verification conformed.
        verify_iterations: verification rounds (whole-graph or focus-scoped); nested trial checks are not in it.
        compiled_reused: patches applied from compiled operators found in memory.
        compiled_new: ids of RepairOperators compiled into memory by this run.
        operators_applied: one dict per applied patch that fixed its violation (from_memory, and memory_key: the
            signature or abstract key its compiled operator was found under, None for the library).
        unrepaired: signatures still violated at the end.
        reasons: signature -> why it is left (no operator, fixed term, rules forbid, rounds exhausted).
        initial_violations: violations before the repair.
        nested_checks: nested (single node, single shape) trial validations run by operators.
        scopes: the scope of each verification ("full" or "focus").
        prevented: learned follow-up fixes applied before a verification and confirmed by it.
        validations: every pySHACL validation run: verify_iterations + nested_checks.
        proposed: change sets the proposer returned (each then checked like any patch).
        lm_calls: LM calls the proposer made during this repair.
    """

    graph: Graph
    added: set = field(default_factory=set)
    removed: set = field(default_factory=set)
    conforms: bool = False
    verify_iterations: int = 0
    compiled_reused: int = 0
    compiled_new: list = field(default_factory=list)
    operators_applied: list = field(default_factory=list)
    unrepaired: list = field(default_factory=list)
    reasons: dict = field(default_factory=dict)
    initial_violations: int = 0
    nested_checks: int = 0
    scopes: list = field(default_factory=list)
    proposed: int = 0
    lm_calls: int = 0
    prevented: int = 0

    @property
    def validations(self) -> int:
        """Every pySHACL validation this repair ran (rounds plus nested trial checks)."""
        return self.verify_iterations + self.nested_checks

    def to_dict(self) -> dict:
        """JSON-compatible summary (counts, operators and signatures; no graph)."""
        return {"conforms": self.conforms, "added": len(self.added), "removed": len(self.removed),
                "verify_iterations": self.verify_iterations, "compiled_reused": self.compiled_reused,
                "compiled_new": self.compiled_new, "operators_applied": self.operators_applied,
                "unrepaired": self.unrepaired, "reasons": self.reasons,
                "initial_violations": self.initial_violations, "nested_checks": self.nested_checks,
                "validations": self.validations, "scopes": self.scopes, "proposed": self.proposed,
                "lm_calls": self.lm_calls, "prevented": self.prevented}


def repair(data, shapes, *, memory=None, max_rounds: int = 10, protected=frozenset(), run_id=None,
           proposer=None, keep_values: bool = False) -> RepairResult:
    """Repair `data` against `shapes` with deterministic operators; compile what verified into `memory`.

    The smallest change set that verifies wins, so an optional bad value is dropped (one triple) rather than
    replaced (two); `keep_values` offers no drop of an offending value, so values are replaced or completed instead.

    `proposer` (e.g. construction.proposer.LLMRepairProposer; off when None) is asked, once per violation, for a
    change set when no operator's patch is left; that goes through the same rules and verification, and compiles.
    """
    original, shapes = load_graph(data), load_graph(shapes)
    loop = _Loop(original, shapes, memory, protected, run_id, proposer, keep_values)
    loop.run(max_rounds)
    return loop.result()


def target_nodes(data: Graph, shapes: Graph, shape=None) -> set:
    """Every node `shape` targets, any shape's when None (targetNode, targetClass with subclasses, implicit class,
    subjects/objects of)."""
    out = set(shapes.objects(shape, SH.targetNode))
    classes = set(shapes.objects(shape, SH.targetClass))
    classes |= {s for s in shapes.subjects(RDF.type, RDFS.Class) if shape in (None, s)
                and ((s, RDF.type, SH.NodeShape) in shapes or (s, RDF.type, SH.PropertyShape) in shapes)}
    for c in classes:
        for sub in set(data.transitive_subjects(RDFS.subClassOf, c)) | {c}:
            out |= set(data.subjects(RDF.type, sub))
    for p in shapes.objects(shape, SH.targetSubjectsOf):
        out |= set(data.subjects(p, None))
    for p in shapes.objects(shape, SH.targetObjectsOf):
        out |= set(data.objects(None, p))
    return out


def shape_triples(shapes: Graph) -> set:
    """Triples that describe shapes: sh: predicates, triples of shape nodes and of blank nodes they reach."""
    sh = str(SH)
    nodes = {s for s, p, _ in shapes if str(p).startswith(sh)}
    nodes |= {s for s, _, o in shapes.triples((None, RDF.type, None)) if str(o).startswith(sh)}
    todo = [o for n in nodes for o in shapes.objects(n, None) if isinstance(o, BNode)]
    while todo:
        b = todo.pop()
        if b not in nodes:
            nodes.add(b)
            todo += [o for o in shapes.objects(b, None) if isinstance(o, BNode)]
    return {t for t in shapes if t[0] in nodes or str(t[1]).startswith(sh)}



def _fingerprint(p: Patch) -> tuple:
    """A patch's identity: its strategy and its triples."""
    return (p.operator, tuple(sorted(" ".join(n.n3() for n in t) for t in p.added)),
            tuple(sorted(" ".join(n.n3() for n in t) for t in p.removed)))


class _Loop:
    """State of one repair run: working graph, guards, failures, memory bookkeeping."""

    def __init__(self, original: Graph, shapes: Graph, memory, protected, run_id, proposer=None, keep_values=False):
        """Copy the data, compute targets and protected triples (shapes, target types, caller's)."""
        self.original, self.shapes, self.memory = original, shapes, memory
        self.proposer, self.asked = proposer, set()
        self.run_id = run_id or "repair"
        self.g = Graph()
        for t in original:
            self.g.add(t)
        self.targets = target_nodes(original, shapes)
        self.protected = set(protected) | shape_triples(shapes) | self._target_types()
        self.present = {n for t in original for n in (t[0], t[2])}
        self.watched = set(shapes.objects(None, SH.targetSubjectsOf)) | set(shapes.objects(None, SH.targetObjectsOf))
        self.failed: dict = {}
        self.found: dict = {}  # compiled item id -> (tier: 0 concrete, 1 abstract, 2 back-off; the key it is under)
        self.searched: set = set()  # keys of violations whose compiled decisions' replay ran trial checks
        self.worked: dict = {}
        self.known: dict = {}
        self.ctx = Context(self.g, shapes, keep_values=keep_values,
                           learned=self._learned if memory is not None else None)
        self.res = RepairResult(graph=self.g)
        self.last, self.report_ref = None, None
        self.cascades: list = []
        self.follow_ids: dict = {}

    def _target_types(self) -> set:
        """rdf:type triples that make a node a target of some shape: never removed."""
        classes = set(self.shapes.objects(None, SH.targetClass)) | set(self.shapes.subjects(RDF.type, RDFS.Class))
        sub = {s for c in classes for s in self.original.transitive_subjects(RDFS.subClassOf, c)}
        return {t for t in self.original.triples((None, RDF.type, None)) if t[2] in sub | classes}

    # ---- loop ----
    def run(self, max_rounds: int) -> None:
        """Verify, patch, re-verify until the graph conforms, nothing applies or the rounds run out."""
        self.last = self._verify(None)
        self.res.initial_violations = self.last.violation_count
        for _ in range(max_rounds):
            if self.last.conforms:
                break
            chosen = self._choose(self.last.violations)
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

    def _choose(self, violations: list[Violation]) -> list[tuple]:
        """One guarded, non-conflicting patch per violation: (violation, patch, compiled item id or None)."""
        chosen, added, removed, focus = [], set(), set(), {v.focus for v in violations}
        self.ctx.flagged = frozenset((v.focus, v.value) for v in violations if v.value is not None)
        self.ctx.reported = frozenset(v.key for v in violations)
        for v in sorted(violations, key=lambda v: (v.component not in _DROPPERS, v.component in _NESTED)):
            if v.component in _NESTED and _touched(v.value, added | removed):
                continue  # a patch chosen this round changes its value node: judge it after the re-verify
            for p, item in self._extended(v, self._ordered(v, self._compiled(v))):
                if _fingerprint(p) in self.failed.get(v.key, set()) or not self._allowed(p, focus):
                    continue
                if p.removed & (added | removed) or p.added & removed:
                    break  # its best patch clashes with one chosen this round: retry after the re-verify
                chosen.append((v, p, item))
                added, removed = added | p.added, removed | p.removed
                break
        return chosen

    def _extended(self, v: Violation, ordered):
        """Each candidate trimmed to real changes, preceded by its form with learned follow-ups (when any apply)."""
        for p, item in ordered:
            p = Patch(p.operator, frozenset(t for t in p.added if t not in self.g),
                      frozenset(t for t in p.removed if t in self.g), p.touches, p.choice)
            longer, used = with_follow_ups(self.memory, self.ctx, v, p)
            if used and not longer.removed & self.protected:
                self.follow_ids[_fingerprint(longer)] = used
                yield longer, item
            yield p, item

    def _ordered(self, v: Violation, compiled: list[Item]):
        """(patch, compiled item id or None) lazily: compiled decisions with a recorded choice replayed (undemoted,
        smallest first; the abstract signatures' only when the concrete one's give nothing, the component-and-role
        back-off only when those give nothing either), then the library with the strategies of compiled decisions
        without a choice first (run once: a replay without a hint is the library strategy itself)."""
        seen: set = set()
        hinted = [c for c in compiled if c.action_schema.choice is not None]
        for tier in (0, 1, 2):
            found = []
            for rank, c in enumerate(x for x in hinted if self.found[x.id][0] == tier):
                checks = self.ctx.checks[0]
                replayed = self._replayed(v, c.action_schema)
                if self.ctx.checks[0] > checks:
                    self.searched.add(v.key)
                for i, p in enumerate(replayed):
                    if _fingerprint(p) not in seen:
                        seen.add(_fingerprint(p))
                        recorded = canonical(p.choice) == canonical(c.action_schema.choice)
                        found.append(((not recorded, c.demoted, p.size, rank, i), p, c.id))
            for _, p, item in sorted(found, key=lambda x: x[0]):
                yield p, item
            if found:
                break
        plain: dict = {}
        for c in sorted((c for c in compiled if c not in hinted), key=lambda c: c.demoted):
            plain.setdefault(c.action_schema.operator, c.id)
        prefer = [op for op in plain if op in strategies_for(v.component)]
        for p in iter_candidates(self.ctx, v, prefer):
            if _fingerprint(p) not in seen:
                yield p, plain.get(p.operator)
        yield from ((p, None) for p in self._proposed(v))

    def _proposed(self, v: Violation) -> list[Patch]:
        """The proposer's change set for `v` as a patch, asked once per violation and only when one is configured."""
        if self.proposer is None or v.key in self.asked:
            return []
        self.asked.add(v.key)
        calls = self.proposer.calls
        cs = self.proposer.propose_repair([v], self.g, self.shapes, self.memory)
        self.res.lm_calls += self.proposer.calls - calls
        p = proposed_patch(v, cs.added, cs.removed)
        self.res.proposed += p is not None
        return [p] if p is not None else []

    def _replayed(self, v: Violation, decision: RepairDecision) -> list[Patch]:
        """Patches of a compiled strategy with its recorded choice as the hint (a compiled plan runs no checks)."""
        if decision.operator not in strategies_for(v.component):
            return []
        return run_strategy(decision.operator, replace(self.ctx, hint=decision.choice), v)

    def _compiled(self, v: Violation) -> list[Item]:
        """Compiled decisions for a violation, best first: its concrete signature's, then its abstract ones' (each
        id's tier noted: the last abstract key, component and role alone, is the back-off read last)."""
        keys, out = [v.signature, *abstract_signatures(v, self.shapes)], []
        for i, key in enumerate(keys):
            found, tier = repair_decisions(self.memory, key), 0 if i == 0 else 2 if i == len(keys) - 1 else 1
            self.found.update({c.id: (tier, key) for c in found})
            out += found
        return out

    def _learned(self, v: Violation, operator: str) -> bool:
        """True when the memory holds an undemoted decision by `operator` under one of `v`'s abstract keys that keep
        its value kind (not the back-off): what a descent may then use without a trial check (read once per run)."""
        keys = tuple(abstract_signatures(v, self.shapes)[:-1])
        if (keys, operator) not in self.known:
            self.known[keys, operator] = any(c.action_schema.operator == operator and not c.demoted
                                             for k in keys for c in repair_decisions(self.memory, k))
        return self.known[keys, operator]

    def _allowed(self, p: Patch, focus: set) -> bool:
        """Minimal-change rules: no protected triple, removals touch a repaired focus, targets and nodes stay."""
        if not p.added and not p.removed:
            return False
        if p.removed & self.protected:
            return False
        near = focus | p.touches
        if any(s not in near and o not in near for s, _, o in p.removed):
            return False
        if not p.removed:
            return True
        watched = any(t[1] in self.watched for t in p.removed)
        if watched and not self.targets <= target_nodes(applied(self.g, p), self.shapes):
            return False
        keep = {n for n in (focus | self.targets) & self.present if n in self.targets or not isinstance(n, Literal)}
        return all(self._still_appears(n, p.removed) for t in p.removed for n in (t[0], t[2]) if n in keep)

    def _still_appears(self, node, removed) -> bool:
        """True when `node` keeps a triple in the working graph once `removed` is gone."""
        for t in self.g.triples((node, None, None)):
            if t not in removed:
                return True
        return any(t not in removed for t in self.g.triples((None, None, node)))

    def _apply(self, chosen: list[tuple]) -> set | None:
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

    def _settle(self, chosen: list[tuple], new) -> bool:
        """Record which patches fixed their violation; undo the others. True when something was undone."""
        still, undone = {v.key for v in new.violations}, False
        near = {(v.focus, v.signature) for v in new.violations}
        fixed = {id(p) for v, p, _ in chosen if v.key not in still
                 and (p.operator != PROPOSED or (v.focus, v.signature) not in near)}  # a proposal must clear its focus
        keep = {t for _, p, _ in chosen if id(p) in fixed for t in p.added}
        for v, p, item in chosen:
            ok = id(p) in fixed
            for fid in self.follow_ids.get(_fingerprint(p), []):
                self.memory.record_use(fid, ok)
                self.res.prevented += ok
            if item is not None and self.memory is not None:
                self.memory.record_use(item, ok)
                self.res.compiled_reused += 1
            if ok:
                self.worked.setdefault(v.signature, []).append((v, p, item))
                self.res.operators_applied.append({"signature": v.signature, "operator": p.operator,
                                                   "choice": p.choice, "focus": str(v.focus),
                                                   "from_memory": item is not None,
                                                   "memory_key": self.found[item][1] if item is not None else None})
                continue
            self.failed.setdefault(v.key, set()).add(_fingerprint(p))
            for t in p.added - keep:
                self.g.remove(t)
            for t in p.removed:
                self.g.add(t)
            undone = True
        return undone

    # ---- result ----
    def result(self) -> RepairResult:
        """Fill in the delta, leftovers and compiled operators."""
        r = self.res
        r.added = {t for t in self.g if t not in self.original}
        r.removed = {t for t in self.original if t not in self.g}
        r.conforms = self.last.conforms
        r.nested_checks = self.ctx.checks[0]
        left = sorted({v.signature for v in self.last.violations})
        r.unrepaired = left
        r.reasons = {s: self._reason([v for v in self.last.violations if v.signature == s]) for s in left}
        if self.memory is not None:
            self._compile({v.signature for v in self.last.violations})
            self._compile_cascades()
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
        return "no library operator derives a value for this constraint here; hand it to the proposer"

    def _compile(self, still: set) -> None:
        """Store each distinct verified decision per signature as a RepairOperator plus an Episode (not reused ones),
        and its abstract form, in one batch."""
        specs = []
        for sig, worked in sorted(self.worked.items()):
            done = set()
            for v, p, item in worked:
                key = (p.operator, canonical(_stored_choice(p)))
                # a patch a stored operator made is known already (concrete or abstract: both keep the whole
                # choice), unless its replay had to try candidates: what the trial checks found is new
                if (item is not None and v.key not in self.searched) or sig in still or key in done:
                    continue
                done.add(key)
                specs += self._specs(sig, v, p)
        if specs:
            try:
                self.res.compiled_new += store_decisions(self.memory, specs)
            except OwlMemoryError:
                return  # the repair stands; a memory that refuses the batch keeps what it had

    def _compile_cascades(self) -> None:
        """Store each cascade whose second violation a later patch fixed as a learned follow-up."""
        fixed = {v.key: p for worked in self.worked.values() for v, p, _ in worked}
        for c in self.cascades:
            if c.second.key in fixed:
                try:
                    store_follow_up(self.memory, c, fixed[c.second.key], self.shapes, _hook(c.second, self.shapes),
                                    self.run_id)
                except OwlMemoryError:
                    continue

    def _specs(self, sig: str, v: Violation, p: Patch) -> list:
        """One verified patch as items: its Episode, its RepairOperator and the abstract-signature operator."""
        decision = RepairDecision(p.operator, sig.split("|", 1)[0], _stored_choice(p), _bindings(p.operator))
        common = {"hook": _hook(v, self.shapes), "run_id": self.run_id, "report_key": self.report_ref.key}
        return [*repair_decision_specs(
            signature=sig, focus=v.focus.n3(), added=sorted(" ".join(x.n3() for x in t) for t in p.added),
            removed=sorted(" ".join(x.n3() for x in t) for t in p.removed), decision=decision, **common),
            *[abstract_decision_spec(abstract=key, decision=replace(decision, component=_component(key)), **common)
              for key in abstract_signatures(v, self.shapes)]]


def _touched(node, delta: set) -> bool:
    """True when `node` is the subject or object of a triple in `delta`."""
    return node is not None and any(node in (t[0], t[2]) for t in delta)


def _stored_choice(p: Patch):
    """The choice a compiled operator records: the patch's choice, None when it only fits one node."""
    return None if p.operator in _PER_INSTANCE and not isinstance(p.choice, dict) else p.choice


def _component(abstract: str) -> str:
    """The component an abstract signature names ("abstract:<Component>|...")."""
    return abstract.removeprefix("abstract:").split("|", 1)[0]


def _bindings(operator: str) -> dict:
    """The declarative parameter bindings of a strategy (where its values come from)."""
    return dict(STRATEGIES[operator][1]) if operator in STRATEGIES else {}


def _hook(v: Violation, shapes: Graph) -> str:
    """Verification hook: the violated shape's IRI, else its nearest named parent shape, else the component IRI."""
    shape = v.shape
    for _ in range(4):
        if isinstance(shape, URIRef):
            return str(shape)
        parent = next(iter(sorted(shapes.subjects(None, shape))), None) if isinstance(shape, BNode) else None
        if parent is None:
            break
        shape = parent
    return str(v.component)
