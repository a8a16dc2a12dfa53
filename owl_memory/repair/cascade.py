"""Learned follow-ups: a fix that caused another violation on the same shape, compiled so the next run prevents it.

When a patch for violation A (abstract signature, strategy) makes the next verification report violation B on the
same focus node and shape, and B is then fixed by strategy S, the run stores a RepairOperator keyed
"follows:<abstract A>|<strategy>" whose action is S and where B's value comes from ("added": the value the first
patch wrote, "none": no value). A later run on any ontology whose shapes give the same abstract signature applies S
on the patched graph before verifying, so B never appears and a verification round is saved.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..compiled import follow_up_spec, follows_key
from ..model import FollowUp, Item, Violation
from .context import Context
from .patch import Candidate, Patch, applied, merge
from .registry import STRATEGIES, run_strategy
from .verification import abstract_signature

if TYPE_CHECKING:
    from ..store import Memory


@dataclass(frozen=True)
class Cascade:
    """A violation `second` that appeared on the shape and focus `first` was patched on by `patch`."""

    first: Violation
    patch: Patch
    second: Violation
    rule: str


def _value_rule(first: Violation, p: Patch, second: Violation) -> str | None:
    """Where the follow-up's value comes from: "none", "added" (a value the first patch wrote), else None."""
    if second.value is None:
        return "none"
    return "added" if second.value in _written(first, p) else None


def _written(v: Violation, p: Patch) -> list:
    """Values the patch wrote for the violation's focus, sorted (objects of added triples from the focus)."""
    return sorted(o for s, _, o in p.added if s == v.focus)


def cascades(chosen: list[Candidate], before: set, after: list[Violation]) -> list[Cascade]:
    """New violations on a patched focus and shape whose value the patch explains, as cascades."""
    out = []
    for w in after:
        if w.key in before:
            continue
        for c in chosen:
            v, p = c.violation, c.patch
            rule = _value_rule(v, p, w) if (v.focus, v.shape) == (w.focus, w.shape) else None
            if rule is not None:
                out.append(Cascade(v, p, w, rule))
                break
    return out


def store_follow_up(memory: Memory, c: Cascade, fixed_by: Patch, shapes, hook: str, run_id: str) -> str:
    """Compile a cascade and the strategy that fixed its second violation into memory; returns the operator id."""
    choice = None if isinstance(fixed_by.choice, dict) else fixed_by.choice
    follow_up = FollowUp(fixed_by.operator, c.second.signature.split("|", 1)[0], c.rule, choice)
    key = follows_key(abstract_signature(c.first, shapes), c.patch.operator)
    return memory.add(follow_up_spec(key=key, first_operator=c.patch.operator,
                                     follow_up=follow_up, hook=hook, run_id=run_id))


def with_follow_ups(ctx: Context, v: Violation, p: Patch,
                    found: list[tuple[Item, FollowUp]]) -> tuple[Patch, list[str]]:
    """The patch extended by every one of the learned, undemoted follow-ups `found` for it (item, follow-up) that
    applies (and the operator ids used)."""
    total, used = p, []
    for c, follow_up in found:
        op = follow_up.operator
        if op not in STRATEGIES:
            continue
        values = _written(v, p) if follow_up.value == "added" else [None]
        for value in values:
            second = replace(v, component=STRATEGIES[op].component, value=value)
            here = ctx.bare(applied(ctx.graph, total), ctx.depth, follow_up.choice)
            got = run_strategy(op, here, second)
            if got:
                total = merge(p.operator, total, got[0])
                used.append(c.id)
    return Patch(p.operator, total.added, total.removed, total.touches, p.choice), used
