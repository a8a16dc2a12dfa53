"""The strategy registry: every library strategy as a typed `Strategy`, registered by the `@strategy` decorator of
the module that defines it (importing repair.components registers them all); lookup and running.

`STRATEGIES` (id -> Strategy) and `REGISTRY` (constraint component IRI -> strategy ids in default order) are
read-only views; only `strategy` adds to them, and `unregister` takes a strategy out again (a test's own).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from rdflib import Graph, Literal, URIRef

from ..model import Violation
from ..vocab import SH
from .completion import completed
from .context import Context
from .cost import change_cost
from .patch import Patch

SPARQL_BASED = URIRef("urn:owl-memory:component:sparql-based")  # key for components no Core IRI names


@dataclass(frozen=True)
class Strategy:
    """One repair strategy of the library.

    Args:
        name: its id, e.g. "class.add_type" (what a compiled operator names).
        components: the constraint component IRIs it repairs.
        bindings: where its values come from, in words (a compiled operator's action schema records them).
        function: (context, violation) -> candidate patches ([] when it does not apply).
        checks: True when it runs trial checks (pySHACL) to find its patches; the others are cheap to list.
        order: where its patches go among patches of equal cost: 0 a component's own strategies, 1 a value derived
            by a rule several components share, 2 a synthesized value (made up, not derived from the data).
    """

    name: str
    components: tuple
    bindings: dict = field(compare=False)
    function: Callable[[Context, Violation], list[Patch]] = field(compare=False)
    checks: bool = field(default=False, compare=False)
    order: int = field(default=0, compare=False)

    @property
    def component(self):
        """The one component it repairs; None when it serves several."""
        return self.components[0] if len(self.components) == 1 else None


_BY_NAME: dict[str, Strategy] = {}
_ORDER: dict[URIRef, tuple[str, ...]] = {}
STRATEGIES = MappingProxyType(_BY_NAME)  # strategy id -> Strategy
REGISTRY = MappingProxyType(_ORDER)  # constraint component IRI -> strategy ids in default order


def strategy(name: str, *components, bindings: dict, checks: bool = False, order: int = 0):
    """Decorator: register a strategy function under `name` for one or more constraint components (appended to their
    default order; `checks`: it runs trial checks; `order`: see Strategy); ValueError when the id is taken."""

    def wrap(function):
        """Register `function` and return it unchanged."""
        if name in _BY_NAME:
            raise ValueError(f"strategy {name!r} already exists; pick another id")
        _BY_NAME[name] = Strategy(name, tuple(components), dict(bindings), function, checks, order)
        for c in components:
            _ORDER[c] = (*_ORDER.get(c, ()), name)
        return function

    return wrap


def unregister(name: str) -> None:
    """Take a registered strategy out again (from its components' order too)."""
    gone = _BY_NAME.pop(name)
    for c in gone.components:
        _ORDER[c] = tuple(n for n in _ORDER[c] if n != name)


TERM_COMPONENTS = frozenset(SH[f"{c}ConstraintComponent"] for c in (
    "Datatype", "NodeKind", "MinLength", "MaxLength", "Pattern", "In", "HasValue", "LanguageIn", "MinInclusive",
    "MinExclusive", "MaxInclusive", "MaxExclusive"))


def strategies_for(component) -> list[str]:
    """Strategy ids for a constraint component IRI, in default order (empty when none exists); a component outside
    the sh: namespace is a SPARQL-based one and gets the SPARQL strategies."""
    if component in _ORDER:
        return list(_ORDER[component])
    core = component is None or str(component).startswith(str(SH))
    return [] if core else list(_ORDER.get(SPARQL_BASED, ()))


def run_strategy(name: str, ctx: Context, violation: Violation) -> list[Patch]:
    """Candidate patches of one strategy for one violation (empty when it does not apply or is not registered)."""
    found = _BY_NAME.get(name)
    return found.function(ctx, violation) if found is not None else []


def candidates(ctx: Context, violation: Violation, prefer: Sequence[str] = ()) -> list[Patch]:
    """Every candidate patch for a violation: preferred strategies first, then the library order."""
    return list(iter_candidates(ctx, violation, prefer))


def iter_candidates(ctx: Context, violation: Violation, prefer: Sequence[str] = (), cheap: bool = False):
    """Candidate patches, cheapest change set first (see `ranked`; preferred strategies, then the library order break
    ties): a minimal repair is tried before any larger one. `cheap`: only strategies that run no trial check."""
    yield from (p for _, p in ranked_candidates(ctx, violation, prefer, cheap))


def ranked_candidates(ctx: Context, violation: Violation, prefer: Sequence[str] = (), cheap: bool = False) -> list:
    """(rank, patch) for every candidate of the violation's strategies, as `ranked` orders them."""
    names = [n for n in dict.fromkeys([*prefer, *strategies_for(violation.component)])
             if not (cheap and n in _BY_NAME and _BY_NAME[n].checks)]
    return ranked(ctx, [p for name in names for p in run_strategy(name, ctx, violation)])


def ranked(ctx: Context, patches: list[Patch]) -> list[tuple[tuple, Patch]]:
    """(rank, patch) sorted: the cost of the change set (repair.cost), fewer removals on ties, then values the
    strategies keep before those they derive before those they synthesize (Strategy.order), the given order last. A
    patch that makes a node a new target is ranked completed with what its new shapes require (repair.completion),
    and offered that way first, then as it was. With ctx.keep_values, patches that only remove come after every patch
    that adds something."""
    found = []
    for i, p in enumerate(patches):
        whole = completed(ctx, p)
        rank = (ctx.keep_values and not p.added, change_cost(ctx.graph, whole.added, whole.removed), len(p.removed),
                _BY_NAME[p.operator].order if p.operator in _BY_NAME else 0)
        found += [(rank, (i, 0), whole)] + ([(rank, (i, 1), p)] if whole is not p else [])
    return [(rank, p) for rank, _, p in sorted(found, key=lambda x: x[:2])]


def is_fixed_term(violation: Violation, shapes: Graph) -> bool:
    """True when a constraint judges the focus node's own term (node-level, or reached by a zero-length path such as
    sh:zeroOrMorePath) and no data edit can change that term."""
    v = violation
    if v.component not in TERM_COMPONENTS or (v.path is not None and v.value != v.focus):
        return False
    return not isinstance(v.focus, Literal) or (None, SH.targetNode, v.focus) in shapes
