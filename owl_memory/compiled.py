"""Compiled operators: every kind a run stores in memory (repair decisions, CQ answers), how it is written and found.

Two schemas, both RepairOperator items keyed by a signature:
- repair decision: action_schema {"operator": strategy id, "component", "choice", "bindings"}, signature
  "<Component>|<shape>|<path>|<value kind>" (verify.signature), grounded by an Episode holding the change set;
- CQ answer: action_schema {"operator": "apply_delta", "delta": blob key, "triples": n}, signature "cq:<hex>".
"""

from __future__ import annotations

import json

from .store.items import ItemSpec

REPAIR_TASK = "shacl-repair"
SPRINT_TASK = "ontology-sprint"
APPLY_DELTA = "apply_delta"


def demoted(item: dict) -> bool:
    """True when a compiled operator has failed more often than it has succeeded."""
    return item.get("failure_count", 0) > item.get("success_count", 0)


def repair_decisions(memory, signature: str) -> list[dict]:
    """Compiled repair decisions stored for a violation signature, best first ([] without memory)."""
    if memory is None:
        return []
    return [c for c in memory.by_signature(signature) if isinstance(c.get("action_schema"), dict)
            and c["action_schema"].get("operator") != APPLY_DELTA]


def cq_answer(memory, signature: str) -> dict | None:
    """The best compiled answer stored for a CQ signature that has not been demoted, if any."""
    for op in memory.by_signature(signature):
        schema = op.get("action_schema") or {}
        if schema.get("operator") == APPLY_DELTA and not demoted(op):
            return op
    return None


def _short(component: str) -> str:
    """A component's name for a title: the local name of a SPARQL-based component's IRI (titles are a few words)."""
    return component.rstrip("/#").rsplit("#", 1)[-1].rsplit("/", 1)[-1][:60]


def repair_decision_specs(*, signature: str, operator: str, choice, bindings: dict, focus: str, added: list[str],
                          removed: list[str], hook: str, run_id: str, report_key: str) -> list[ItemSpec]:
    """One verified repair decision as items to store: its Episode (the change set), then the RepairOperator."""
    comp = signature.split("|", 1)[0]
    schema = {"operator": operator, "component": comp, "choice": choice, "bindings": bindings}
    delta = {"signature": signature, "operator": operator, "focus": focus, "added": added, "removed": removed,
             "run": run_id}
    prov = {"run": run_id, "derived_from": report_key}
    ep = ItemSpec("Episode", f"Repaired {_short(comp)} violation", f"Patch {operator} fixed {signature[:120]}.",
                  json.dumps(delta, sort_keys=True), task_types=(REPAIR_TASK,), failure_modes=(comp,), provenance=prov)
    content = json.dumps({"signature": signature, "action_schema": schema}, sort_keys=True)
    return [ep, ItemSpec("RepairOperator", f"Repair {_short(comp)} by {operator}",
                         f"Use for violations with signature {signature[:160]}.", content, task_types=(REPAIR_TASK,),
                         failure_modes=(comp,), signature=signature, action_schema=schema, verification_hook=hook,
                         grounded_by=(ep.id,), provenance=prov)]


def abstract_decision_spec(*, abstract: str, operator: str, choice, bindings: dict, hook: str, run_id: str,
                           report_key: str) -> ItemSpec:
    """The shape-independent form of a verified decision, keyed by its abstract signature; a plan is kept (its
    steps name member shapes by content, so it replays where the same members occur and yields nothing elsewhere)."""
    comp = abstract.removeprefix("abstract:").split("|", 1)[0]
    schema = {"operator": operator, "component": comp, "choice": choice, "bindings": bindings}
    content = json.dumps({"signature": abstract, "action_schema": schema}, sort_keys=True)
    return ItemSpec("RepairOperator", f"Repair {_short(comp)} by {operator} (any shape)",
                    f"Use first for violations with abstract signature {abstract[:150]}.", content,
                    task_types=(REPAIR_TASK,), failure_modes=(comp,), signature=abstract, action_schema=schema,
                    verification_hook=hook, provenance={"run": run_id, "derived_from": report_key})


def store_decisions(memory, specs: list[ItemSpec]) -> list[str]:
    """Store a run's compiled decisions in one batch (one item check); returns the ids of the concrete
    RepairOperators not stored before."""
    ops = [s.id for s in specs if s.kind == "RepairOperator" and not str(s.signature).startswith("abstract:")]
    known = memory.backend.stored(set(ops))
    memory.add_many(specs)
    return [i for i in dict.fromkeys(ops) if i not in known]


def store_cq_answer(memory, *, signature: str, title: str, summary: str, payload: str, delta_key: str,
                    triples: int, applies_to: list, tags: tuple, query: str, run_id: str) -> bool:
    """Store the compiled answer of one CQ (a delta handle); True when it was not stored before."""
    before = len(memory.by_signature(signature))
    memory.add(ItemSpec("RepairOperator", title, summary, payload, applies_to=applies_to, task_types=(SPRINT_TASK,),
                        tags=tags, confidence=0.8, provenance={"run": run_id, "derived_from": delta_key},
                        signature=signature, verification_hook=query,
                        action_schema={"operator": APPLY_DELTA, "delta": delta_key, "triples": triples}))
    return len(memory.by_signature(signature)) > before
