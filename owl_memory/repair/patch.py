"""Patches as change sets (triples added and removed) and the Context an operator reads."""

from __future__ import annotations

from dataclasses import dataclass, field

from rdflib import Graph
from rdflib.collection import Collection

from ..vocab import SH
from .conformance import read, readable
from .paths import path_of, value_triple
from .verify import Violation


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


@dataclass
class Context:
    """What an operator may read: the working data graph, the shapes graph and a nested-check function.

    Args:
        graph: the data graph being repaired (not modified by operators).
        shapes: the shapes graph (never modified).
        depth: nesting depth of sh:node / logical descents.
        checks: counter of nested conformance checks run.
        hint: a compiled operator's recorded choice (e.g. an sh:or branch and its plan): replayed with no trial checks.
        keep_values: never drop an offending value to repair it (replace it instead), even where dropping is smaller.
        flagged: (focus, value) pairs the last verification reported: a value some other constraint rejects.
        reported: keys (Violation.key) of every violation the last verification reported.
        learned: (violation, strategy id) -> True when a memory holds a verified decision by that strategy under the
            violation's abstract key (None: no memory); a descent then derives what a member needs by it, unchecked.
    """

    graph: Graph
    shapes: Graph
    depth: int = 0
    checks: list = field(default_factory=lambda: [0])
    hint: object = None
    keep_values: bool = False
    flagged: frozenset = frozenset()
    reported: frozenset = frozenset()
    learned: object = None

    def nested(self, node, shape, graph: Graph | None = None) -> list[Violation]:
        """Violations of `node` against `shape` alone (pySHACL with a temporary target)."""
        from .verify import nested_violations

        self.checks[0] += 1
        return nested_violations(self.graph if graph is None else graph, self.shapes, node, shape)

    def conforms(self, node, shape, graph: Graph | None = None) -> bool:
        """Does `node` conform to `shape` (in `graph`, else the working graph)? Read off the data for a shape that only
        counts, lists and types values on predicate paths (repair.conformance), else one nested check."""
        g = self.graph if graph is None else graph
        return read(g, self.shapes, node, shape) if readable(self.shapes, shape) else not self.nested(node, shape, g)

    def param(self, shape, name):
        """One value of a shape parameter (sh:<name>), or None."""
        return self.shapes.value(shape, SH[name])

    def params(self, shape, name) -> list:
        """All values of a shape parameter, sorted."""
        return sorted(self.shapes.objects(shape, SH[name]))

    def listed(self, shape, name) -> list:
        """Members of an RDF list parameter (sh:in, sh:or, ...), in list order."""
        head = self.param(shape, name)
        return list(Collection(self.shapes, head)) if head is not None else []

    def deeper(self, graph: Graph | None = None) -> Context:
        """A context one descent deeper, optionally over another graph."""
        return Context(self.graph if graph is None else graph, self.shapes, self.depth + 1, self.checks,
                       keep_values=self.keep_values, learned=self.learned)


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
    """A patch swapping the violation's value for `new` on the last step of its path."""
    t = value_triple(ctx, v.focus, path_of(ctx, v), v.value)
    if t is None or new is None or new == v.value:
        return []
    n = (t[0], t[1], new) if t[2] == v.value else (new, t[1], t[2])
    return [Patch(name, frozenset({n}), frozenset({t}), frozenset({v.focus, t[0], t[2]}), choice)]


def drop_value(name: str, ctx: Context, v: Violation, value, choice=None) -> list[Patch]:
    """A patch removing one value of the focus on the last step of its path."""
    return dropping(name, v.focus, [value_triple(ctx, v.focus, path_of(ctx, v), value)], choice)


def dropping(name: str, focus, drop: list, choice=None) -> list[Patch]:
    """A patch removing the last-step triples of values along a path ([] when one has none); it touches the
    nodes those triples join, so the minimal-change rules let it reach past the focus on a longer path."""
    if not drop or None in drop:
        return []
    return [Patch(name, frozenset(), frozenset(drop), frozenset({focus} | {n for t in drop for n in (t[0], t[2])}),
                  choice)]
