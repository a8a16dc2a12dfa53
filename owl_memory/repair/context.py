"""The Context an operator reads: the working data graph, the shapes graph, the run's nested checks and hints."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rdflib import Graph
from rdflib.collection import Collection

from ..model import Violation
from ..vocab import SH
from .conformance import read, readable
from .verification import NestedChecks


@dataclass(frozen=True)
class Context:
    """What an operator may read: the working data graph, the shapes graph and the run's nested checks.

    Args:
        graph: the data graph being repaired (not modified by operators).
        shapes: the shapes graph (never modified).
        depth: nesting depth of sh:node / logical descents.
        checks: the nested conformance checks of the run (one per repair run, shared by every context derived from
            its first; a new one when not given).
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
    checks: NestedChecks | None = None
    hint: object = None
    keep_values: bool = False
    flagged: frozenset = frozenset()
    reported: frozenset = frozenset()
    learned: Callable[[Violation, str], bool] | None = None

    def __post_init__(self) -> None:
        """Give a context made without nested checks its own."""
        if self.checks is None:
            object.__setattr__(self, "checks", NestedChecks(self.shapes))

    @property
    def nested_checks(self) -> NestedChecks:
        """The run's nested checks (every context has them: given, or its own)."""
        assert self.checks is not None  # __post_init__ makes them when none are given
        return self.checks

    def nested(self, node, shape, graph: Graph | None = None) -> list[Violation]:
        """Violations of `node` against `shape` alone (pySHACL with a temporary target), counted."""
        return self.nested_checks.violations(self.graph if graph is None else graph, node, shape)

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
        """A context one descent deeper, optionally over another graph (keep_values and learned kept)."""
        return Context(self.graph if graph is None else graph, self.shapes, self.depth + 1, self.checks,
                       keep_values=self.keep_values, learned=self.learned)

    def bare(self, graph: Graph, depth: int, hint=None) -> Context:
        """A context over `graph` at `depth` sharing only the shapes and the nested checks (and `hint`): no round's
        flags, keep_values or learned decisions (how compiled steps and follow-ups run)."""
        return Context(graph, self.shapes, depth, self.checks, hint)
