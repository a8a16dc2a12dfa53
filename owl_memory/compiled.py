"""Compiled operators in memory: how each kind a run compiles (model.operators) is written, found and demoted.

Every kind is a RepairOperator item keyed by a signature (om:violationSignature):
- repair decision (`RepairDecision`): "<Component>|<shape>|<path>|<value kind>" (verify.signature), its abstract
  forms ("abstract:..."), grounded by an Episode holding the change set;
- follow-up (`FollowUp`): "follows:<abstract signature>|<strategy>" (repair/cascade.py);
- CQ answer (`CqAnswer`): "cq:<hex>" (construction/sprint.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .errors import InvalidItem
from .model import CqAnswer, FollowUp, Item, ItemSpec, RepairDecision

if TYPE_CHECKING:
    from .store import Memory

REPAIR_TASK = "shacl-repair"
SPRINT_TASK = "ontology-sprint"


def repair_decisions(memory: Memory | None, signature: str) -> list[Item]:
    """Compiled repair decisions stored for a violation signature, best first ([] without memory)."""
    return [c for c, _ in decisions_in(memory.by_signature(signature))] if memory is not None else []


def decisions_in(items: list[Item]) -> list[tuple[Item, RepairDecision]]:
    """(item, its decision) for the compiled repair decisions among some items (what memory.by_signature found),
    in their order."""
    return [(c, c.action_schema) for c in items if isinstance(c.action_schema, RepairDecision)]


def follow_ups_in(items: list[Item]) -> list[tuple[Item, FollowUp]]:
    """(item, its follow-up) for the learned follow-ups among some items (what memory.by_signature found under a
    "follows:..." key) that have not been demoted, in their order."""
    return [(c, c.action_schema) for c in items if isinstance(c.action_schema, FollowUp) and not c.demoted]


def follows_key(abstract: str, operator: str) -> str:
    """The key learned follow-ups are stored under: the first violation's abstract signature and the strategy that
    patched it."""
    return f"follows:{abstract}|{operator}"


def cq_answer(memory: Memory, signature: str) -> Item | None:
    """The best compiled answer stored for a CQ signature that has not been demoted, if any."""
    return next((op for op in memory.by_signature(signature)
                 if isinstance(op.action_schema, CqAnswer) and not op.demoted), None)


def _short(component: str) -> str:
    """A component's name for a title: the local name of a SPARQL-based component's IRI (titles are a few words)."""
    return component.rstrip("/#").rsplit("#", 1)[-1].rsplit("/", 1)[-1][:60]


def _component(decision: RepairDecision | FollowUp) -> str:
    """The constraint component a decision repairs (its item's title and failure mode); InvalidItem when it names
    none."""
    if decision.component is None:
        raise InvalidItem(f"a compiled {decision.operator} decision names no constraint component; compile decisions "
                          "of verified repairs only")
    return decision.component


def repair_decision_specs(*, signature: str, decision: RepairDecision, focus: str, added: list[str],
                          removed: list[str], hook: str, run_id: str, report_key: str) -> list[ItemSpec]:
    """One verified repair decision as items to store: its Episode (the change set), then the RepairOperator."""
    comp, operator = _component(decision), decision.operator
    delta = {"signature": signature, "operator": operator, "focus": focus, "added": added, "removed": removed,
             "run": run_id}
    prov = {"run": run_id, "derived_from": report_key}
    ep = ItemSpec("Episode", f"Repaired {_short(comp)} violation", f"Patch {operator} fixed {signature[:120]}.",
                  json.dumps(delta, sort_keys=True), task_types=(REPAIR_TASK,), failure_modes=(comp,), provenance=prov)
    content = json.dumps({"signature": signature, "action_schema": decision.to_json()}, sort_keys=True)
    return [ep, ItemSpec("RepairOperator", f"Repair {_short(comp)} by {operator}",
                         f"Use for violations with signature {signature[:160]}.", content, task_types=(REPAIR_TASK,),
                         failure_modes=(comp,), signature=signature, action_schema=decision, verification_hook=hook,
                         grounded_by=(ep.id,), provenance=prov)]


def abstract_decision_spec(*, abstract: str, decision: RepairDecision, hook: str, run_id: str,
                           report_key: str) -> ItemSpec:
    """The shape-independent form of a verified decision, keyed by its abstract signature; a plan is kept (its
    steps name member shapes by content, so it replays where the same members occur and yields nothing elsewhere)."""
    comp, operator = _component(decision), decision.operator
    content = json.dumps({"signature": abstract, "action_schema": decision.to_json()}, sort_keys=True)
    return ItemSpec("RepairOperator", f"Repair {_short(comp)} by {operator} (any shape)",
                    f"Use first for violations with abstract signature {abstract[:150]}.", content,
                    task_types=(REPAIR_TASK,), failure_modes=(comp,), signature=abstract, action_schema=decision,
                    verification_hook=hook, provenance={"run": run_id, "derived_from": report_key})


def follow_up_spec(*, key: str, first_operator: str, follow_up: FollowUp, hook: str, run_id: str) -> ItemSpec:
    """A learned follow-up as an item: apply `follow_up` right after `first_operator` patched a violation `key`
    names."""
    return ItemSpec("RepairOperator", f"After {first_operator}, also {follow_up.operator}",
                    f"Apply before verifying when {key[:140]} is patched.",
                    json.dumps(follow_up.to_json(), sort_keys=True), task_types=(REPAIR_TASK,),
                    failure_modes=(_component(follow_up),), signature=key, action_schema=follow_up,
                    verification_hook=hook, provenance={"run": run_id})


def store_decisions(memory: Memory, specs: list[ItemSpec]) -> list[str]:
    """Store a run's compiled decisions in one batch (one item check); returns the ids of the concrete
    RepairOperators not stored before."""
    ops = [s.id for s in specs if s.kind == "RepairOperator" and not str(s.signature).startswith("abstract:")]
    known = memory.stored(set(ops))
    memory.add_many(specs)
    return [i for i in dict.fromkeys(ops) if i not in known]


def store_cq_answer(memory: Memory, *, signature: str, title: str, summary: str, payload: str, answer: CqAnswer,
                    applies_to: Sequence[str], tags: tuple[str, ...], query: str, run_id: str) -> bool:
    """Store the compiled answer of one CQ (a delta handle); True when it was not stored before."""
    before = len(memory.by_signature(signature))
    memory.add(ItemSpec("RepairOperator", title, summary, payload, applies_to=tuple(applies_to),
                        task_types=(SPRINT_TASK,), tags=tags, confidence=0.8,
                        provenance={"run": run_id, "derived_from": answer.delta}, signature=signature,
                        verification_hook=query, action_schema=answer))
    return len(memory.by_signature(signature)) > before
