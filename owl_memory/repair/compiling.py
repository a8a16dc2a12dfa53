"""What a repair run compiles into memory: each distinct verified decision per signature (a RepairOperator, its
Episode and its abstract forms) and each cascade a later patch fixed (a learned follow-up)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from rdflib import BNode, Graph, URIRef

from ..compiled import abstract_decision_spec, repair_decision_specs, store_decisions
from ..errors import OwlMemoryError
from ..model import RepairDecision, Violation
from ..model.operators import canonical
from ..vocab import ordered
from .cascade import Cascade, store_follow_up
from .patch import Candidate, Patch
from .registry import STRATEGIES
from .verification import abstract_signatures

if TYPE_CHECKING:
    from ..store import Memory

_PER_INSTANCE = frozenset({"or.satisfy_branch", "xone.satisfy_one"})  # a choice without a plan fits one node


def compile_decisions(memory: Memory, shapes: Graph, worked: list[Candidate], skip: set, searched: set, run_id: str,
                      report_key: str) -> list[str]:
    """Store each distinct verified decision per signature (not those under `skip`, nor patches a stored operator
    made whose replay ran no trial check) as a RepairOperator plus an Episode, and its abstract forms, in one batch;
    returns the ids of the operators new to the memory ([] when the memory refuses the batch: the repair stands)."""
    specs, done = [], set()
    for c in sorted(worked, key=lambda c: c.violation.signature):
        v, p, sig = c.violation, c.patch, c.violation.signature
        key = (sig, p.operator, canonical(_stored_choice(p)))
        # a patch a stored operator made is known already (concrete or abstract: both keep the whole
        # choice), unless its replay had to try candidates: what the trial checks found is new
        if (c.item is not None and v.key not in searched) or sig in skip or key in done:
            continue
        done.add(key)
        specs += _specs(sig, v, p, shapes, run_id, report_key)
    if not specs:
        return []
    try:
        return store_decisions(memory, specs)
    except OwlMemoryError:
        return []


def compile_cascades(memory: Memory, shapes: Graph, cascades: list[Cascade], worked: list[Candidate],
                     run_id: str) -> None:
    """Store each cascade whose second violation a later patch fixed as a learned follow-up."""
    fixed = {c.violation.key: c.patch for c in worked}
    for c in cascades:
        if c.second.key in fixed:
            try:
                store_follow_up(memory, c, fixed[c.second.key], shapes, _hook(c.second, shapes), run_id)
            except OwlMemoryError:
                continue


def _specs(sig: str, v: Violation, p: Patch, shapes: Graph, run_id: str, report_key: str) -> list:
    """One verified patch as items: its Episode, its RepairOperator and the abstract-signature operators."""
    decision = RepairDecision(p.operator, sig.split("|", 1)[0], _stored_choice(p), _bindings(p.operator))
    common = {"hook": _hook(v, shapes), "run_id": run_id, "report_key": report_key}
    return [*repair_decision_specs(
        signature=sig, focus=v.focus.n3(), added=sorted(" ".join(x.n3() for x in t) for t in p.added),
        removed=sorted(" ".join(x.n3() for x in t) for t in p.removed), decision=decision, **common),
        *[abstract_decision_spec(abstract=key, decision=replace(decision, component=_component(key)), **common)
          for key in abstract_signatures(v, shapes)]]


def _stored_choice(p: Patch):
    """The choice a compiled operator records: the patch's choice, None when it only fits one node."""
    return None if p.operator in _PER_INSTANCE and not isinstance(p.choice, dict) else p.choice


def _component(abstract: str) -> str:
    """The component an abstract signature names ("abstract:<Component>|...")."""
    return abstract.removeprefix("abstract:").split("|", 1)[0]


def _bindings(operator: str) -> dict:
    """The declarative parameter bindings of a strategy (where its values come from)."""
    return dict(STRATEGIES[operator].bindings) if operator in STRATEGIES else {}


def _hook(v: Violation, shapes: Graph) -> str:
    """Verification hook: the violated shape's IRI, else its nearest named parent shape, else the component IRI."""
    shape = v.shape
    for _ in range(4):
        if isinstance(shape, URIRef):
            return str(shape)
        parent = next(iter(ordered(shapes.subjects(None, shape))), None) if isinstance(shape, BNode) else None
        if parent is None:
            break
        shape = parent
    return str(v.component)
