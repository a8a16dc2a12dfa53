"""Patches: a strategy's candidate change (triples added and removed), and how patches are made and combined."""

from __future__ import annotations

from dataclasses import dataclass

from rdflib import Graph, Literal

from ..model import Violation
from ..vocab import SH
from .context import Context
from .paths import last_hops, path_of


@dataclass(frozen=True)
class Patch:
    """A candidate change: triples to add and remove, the strategy that made it and the nodes it repairs.

    Args:
        operator: strategy id, e.g. "class.add_type".
        added: triples to add.
        removed: triples to remove.
        touches: focus nodes (top-level or nested) this patch repairs; removals must touch one of them.
        choice: a small JSON value naming which candidate of the strategy this is (e.g. an sh:or branch).
    """

    operator: str
    added: frozenset = frozenset()
    removed: frozenset = frozenset()
    touches: frozenset = frozenset()
    choice: object = None

    @property
    def size(self) -> int:
        """Number of triples changed."""
        return len(self.added) + len(self.removed)

    def clashes(self, added: set, removed: set) -> bool:
        """True when this patch cannot join a change that adds `added` and removes `removed`: it removes what the
        change adds or removes, or adds what the change removes."""
        return bool(self.removed & (added | removed) or self.added & removed)

    @property
    def fingerprint(self) -> tuple:
        """The patch's identity: its strategy and its triples."""
        return (self.operator, tuple(sorted(" ".join(n.n3() for n in t) for t in self.added)),
                tuple(sorted(" ".join(n.n3() for n in t) for t in self.removed)))


@dataclass(frozen=True, eq=False)
class Candidate:
    """A repair choice: a patch offered for a violation and where it came from (equal only to itself: one offer).

    Args:
        violation: the violation it repairs.
        patch: the change, its strategy and the strategy's choice.
        item: the compiled memory item it replays (None: the library's strategies or the proposer).
        memory_key: the signature or abstract key that item was found under (None when not from memory).
        follow_ups: ids of the learned follow-ups folded into the patch.
    """

    violation: Violation
    patch: Patch
    item: str | None = None
    memory_key: str | None = None
    follow_ups: tuple[str, ...] = ()


def applied(g: Graph, p: Patch) -> Graph:
    """A copy of `g` with a patch applied (`g` itself is not modified)."""
    out = Graph()
    for t in g:
        if t not in p.removed:
            out.add(t)
    for t in p.added:
        out.add(t)
    return out


def merge(name: str, a: Patch, b: Patch) -> Patch:
    """Two patches as one (b after a)."""
    added = (a.added - b.removed) | b.added
    removed = (a.removed - b.added) | (b.removed - a.added)
    return Patch(name, frozenset(added), frozenset(removed), a.touches | b.touches, a.choice)


def replace_value(name: str, ctx: Context, v: Violation, new, choice=None) -> list[Patch]:
    """A patch swapping the violation's value for `new` on the last step of its path (see `value_triples`)."""
    found = value_triples(ctx, v, v.value)
    if not found or new is None or new == v.value:
        return []
    swapped = {(t[0], t[1], new) if t[2] == v.value else (new, t[1], t[2]) for t in found}
    if any(isinstance(t[0], Literal) for t in swapped):
        return []
    return [Patch(name, frozenset(swapped), frozenset(found),
                  frozenset({v.focus} | {n for t in found for n in (t[0], t[2])}), choice)]


def drop_value(name: str, ctx: Context, v: Violation, value, choice=None) -> list[Patch]:
    """A patch removing one value of the focus on the last step of its path (see `value_triples`)."""
    return dropping(name, v.focus, value_triples(ctx, v, value) or [None], choice)


def value_triples(ctx: Context, v: Violation, value) -> list:
    """The data triples that hold `value` as the violation's value: the last step of its path from the focus (every
    one: a sequence path may reach it through several nodes); for a node-level result on a node with no data of its
    own (a literal, an IRI only used as a value) that a shape targets as the object of a predicate
    (sh:targetObjectsOf), every triple holding it as such an object (it is that predicate's value, as on a property
    shape). [] when none."""
    path = path_of(ctx, v)
    if path is None and value == v.focus and v.shape is not None and (value, None, None) not in ctx.graph:
        return sorted((s, p, value) for p in ctx.shapes.objects(v.shape, SH.targetObjectsOf)
                      for s in ctx.graph.subjects(p, value))
    return last_hops(ctx, v.focus, path, value)


def dropping(name: str, focus, drop: list, choice=None) -> list[Patch]:
    """A patch removing the last-step triples of values along a path ([] when one has none); it touches the
    nodes those triples join, so the minimal-change rules let it reach past the focus on a longer path."""
    if not drop or None in drop:
        return []
    return [Patch(name, frozenset(), frozenset(drop), frozenset({focus} | {n for t in drop for n in (t[0], t[2])}),
                  choice)]
