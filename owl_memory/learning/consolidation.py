"""Consolidation: store extracted items without duplicates, with conflicts and exceptions made explicit.

For each new item, in order:
1. exact duplicate: its stable id is already stored -> nothing is written (`duplicates`).
2. exception: an active item of the other polarity (AntiPattern vs Procedure/Principle) prescribes or forbids the
   same compiled action, and the new item is narrower (the general one has no ontology, or no task type, where
   the new one has) -> the new item is stored with scope "exception" and om:refines the general one.
3. conflict: same contradiction with overlapping applicability but not narrower -> both are stored and linked
   om:conflictsWith both ways (search hits show `conflicts_with`).
4. near-duplicate: an active item of the same kind with overlapping applicability whose title + summary
   similarity is at least SIMILARITY (word-set Jaccard, below) and whose compiled action is the same (or
   absent on one side) -> the stored item survives and supersedes the new one, which is stored, then archived;
   counters are summed into the survivor; the archived item keeps its own prov:wasGeneratedBy /
   prov:wasDerivedFrom, reachable from the survivor through om:supersedes, so both chains stay (`merged`:
   [stored, new]; the archived one of the pair is the one merged away). The new item survives instead when it is
   strictly better (`better`): the stored one has never been judged a success, and the new one has a compiled
   action the stored one lacks, or a confidence higher by at least BETTER_BY.
5. otherwise it is added (`added`). Items the shapes reject are reported in `rejected`, never half-written.

Similarity (deterministic): Jaccard index of the sets of case-folded alphanumeric words of title + " " + summary.

Append-only (`append_only=True`, the ablation's `--no-consolidate`, E9): every new item is added as it is (an exact
duplicate still is not: its stable id is stored), with no merge, no exception and no conflict link.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import InvalidItem, UnknownItem
from ..model import Card, CompiledOperator, CustomAction, Item, ItemSpec, JudgeRule, QueryRecipe, Report, ToolSequence
from ..vocab import serves_ontology

if TYPE_CHECKING:
    from ..store import Memory

SIMILARITY = 0.8
BETTER_BY = 0.1  # how much more confident a near-duplicate must be to supersede the stored item
CANDIDATES = 50
_WORD = re.compile(r"[^\W_]+")
_ADVICE_KINDS = ("Procedure", "Principle")


def similarity(a: str, b: str) -> float:
    """Jaccard index of the case-folded word sets of two texts (1.0 for two empty texts)."""
    wa, wb = set(_WORD.findall(a.casefold())), set(_WORD.findall(b.casefold()))
    return len(wa & wb) / len(wa | wb) if wa | wb else 1.0


def consolidate(memory: Memory, specs: Iterable[ItemSpec], report: Report | None = None,
                append_only: bool = False) -> Report:
    """Store `specs` into `memory` by the rules above (append-only: added as they are); returns (or extends) the
    report."""
    report = report if report is not None else Report()
    before = len(memory.forgotten)
    with _bound_after(memory):
        for spec in specs:
            try:
                _append(memory, spec, report) if append_only else _one(memory, spec, report)
            except (InvalidItem, UnknownItem) as e:
                report.rejected.append(f"{spec.kind} {spec.title!r}: {str(e)[:240]}")
    report.archived += memory.forgotten[before:]
    return report


@contextlib.contextmanager
def _bound_after(memory: Memory) -> Iterator[None]:
    """A bounded memory's bound applied once, after the run's items are consolidated: an item merged away (stored,
    then archived) must not push out the very item it merged into."""
    bound = memory.max_items
    if bound is None:
        yield
        return
    memory.max_items = None
    try:
        yield
    finally:
        memory.max_items = bound
        memory.enforce_bound()


def _append(memory: Memory, spec: ItemSpec, report: Report) -> None:
    """Add one item as it is (a stored id is a duplicate)."""
    if memory.stored([spec.id]):
        report.duplicates.append(spec.id)
        return
    report.added.append(memory.add(spec))


def _one(memory: Memory, spec: ItemSpec, report: Report) -> None:
    """Consolidate one item."""
    if memory.stored([spec.id]):
        report.duplicates.append(spec.id)
        return
    candidates = _candidates(memory, spec)
    opposed = [c for c in candidates if _contradicts(spec, c)]
    general = next((c for c in opposed if _narrower(spec, c)), None)
    if general is not None and spec.scope == "general":
        exc = memory.add(replace(spec, scope="exception", refines=general.id))
        report.exceptions.append([exc, general.id])
        return
    if opposed:
        new = memory.add(spec)
        for c in opposed:
            memory.link(new, "conflictsWith", c.id)
            report.conflicts.append([new, c.id])
        return
    twin = next((c for c in candidates if _near_duplicate(spec, c)), None)
    new = memory.add(spec)
    if twin is None:
        report.added.append(new)
        return
    if better(spec, twin):
        merge(memory, new, twin.id)
    else:
        merge(memory, twin.id, new)
    report.merged.append([twin.id, new])


def better(spec: ItemSpec, stored: Item) -> bool:
    """Whether a new near-duplicate supersedes the stored item (the rule of the module docstring, step 4)."""
    if stored.success_count > 0:
        return False
    return (spec.action_schema is not None and stored.action_schema is None) or \
        spec.confidence >= stored.confidence + BETTER_BY


def merge(memory: Memory, keep: str, drop: str) -> None:
    """`keep` supersedes `drop` (archived, its own provenance chain intact) and gains its counters."""
    gone = memory.get(drop)
    memory.supersede(drop, keep)
    memory.archive(drop)
    for _ in range(gone.success_count):
        memory.record_use(keep, True)
    for _ in range(gone.failure_count):
        memory.record_use(keep, False)
    for _ in range(gone.use_count - gone.success_count - gone.failure_count):
        memory.record_use(keep, None)


def _candidates(memory: Memory, spec: ItemSpec) -> list[Item]:
    """Active items that could duplicate or contradict `spec`: same task type (when it has one), full records."""
    task_type = spec.task_types[0] if spec.task_types else None
    hits = memory.search(task_type=task_type, k=CANDIDATES)
    return [memory.get(h.id) for h in hits if _overlaps(spec, h)]


def _overlaps(spec: ItemSpec, item: Card) -> bool:
    """Overlapping applicability: ontologies intersect (compared without a trailing # or /), or either side applies
    to any ontology."""
    return not spec.applies_to or any(serves_ontology(item.applies_to, a) for a in spec.applies_to)


def _contradicts(spec: ItemSpec, item: Item) -> bool:
    """An AntiPattern forbidding the very compiled action a Procedure/Principle prescribes (either way round)."""
    kinds = {spec.kind, item.kind}
    if not ("AntiPattern" in kinds and kinds & set(_ADVICE_KINDS)):
        return False
    return spec.action_schema is not None and action_key(spec.action_schema) == action_key(item.action_schema)


def action_key(op: CompiledOperator | None) -> tuple | None:
    """The comparable part of a compiled action: operator, form and patterns (no prose, no parameter names)."""
    if isinstance(op, QueryRecipe):
        return op.operator, op.form, op.where
    if isinstance(op, ToolSequence):
        return op.operator, None, op.tools
    if isinstance(op, JudgeRule):  # its question form and roles too: a rule binds only questions of its form and roles
        return op.operator, op.check, (op.template, op.question, tuple(p.role for p in op.parameters))
    if isinstance(op, CustomAction):
        d = op.data
        return (d.get("operator"), d.get("form"), repr(d.get("where") or d.get("tools"))) if d else None
    return None if op is None else (op.operator, None, None)


def _narrower(spec: ItemSpec, item: Item) -> bool:
    """The new item constrains applicability where the stored one does not (ontology or task type)."""
    return (bool(spec.applies_to) and not item.applies_to) or (bool(spec.task_types) and not item.task_types)


def _near_duplicate(spec: ItemSpec, item: Item) -> bool:
    """Same kind, similar title + summary, and the same compiled action (or none on one side)."""
    if spec.kind != item.kind or item.scope != spec.scope:
        return False
    schema, stored = spec.action_schema, item.action_schema
    if schema and stored and action_key(schema) != action_key(stored):
        return False
    return similarity(f"{spec.title} {spec.summary}", f"{item.title} {item.summary}") >= SIMILARITY

