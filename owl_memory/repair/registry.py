"""The strategy registry: strategy id -> component, parameter bindings, function; lookup and running."""

from __future__ import annotations

from rdflib import Graph, Literal, URIRef

from ..vocab import SH
from .patch import Context, Patch
from .verify import Violation

SPARQL_BASED = URIRef("urn:owl-memory:component:sparql-based")  # key for components no Core IRI names
STRATEGIES: dict = {}  # strategy id -> (component or None when it serves several, bindings, function)
REGISTRY: dict = {}  # constraint component IRI -> strategy ids in default order


def strategy(name: str, *components, bindings: dict):
    """Decorator: register a strategy function under `name` for one or more constraint components."""

    def wrap(function):
        """Register `function` and return it unchanged."""
        register(name, components, bindings, function)
        return function

    return wrap


def register(name: str, component, bindings: dict, function) -> None:
    """Add a strategy (appended to its components' default order); ValueError when the id is taken."""
    if name in STRATEGIES:
        raise ValueError(f"strategy {name!r} already exists; pick another id")
    comps = tuple(component) if isinstance(component, tuple | list) else (component,)
    STRATEGIES[name] = (comps[0] if len(comps) == 1 else None, dict(bindings), function)
    for c in comps:
        REGISTRY.setdefault(c, []).append(name)


TERM_COMPONENTS = {SH[f"{c}ConstraintComponent"] for c in (
    "Datatype", "NodeKind", "MinLength", "MaxLength", "Pattern", "In", "HasValue", "LanguageIn", "MinInclusive",
    "MinExclusive", "MaxInclusive", "MaxExclusive")}


def strategies_for(component) -> list[str]:
    """Strategy ids for a constraint component IRI, in default order (empty when none exists); a component outside
    the sh: namespace is a SPARQL-based one and gets the SPARQL strategies."""
    if component in REGISTRY:
        return list(REGISTRY[component])
    core = component is None or str(component).startswith(str(SH))
    return [] if core else list(REGISTRY.get(SPARQL_BASED, []))


def run_strategy(name: str, ctx: Context, violation: Violation) -> list[Patch]:
    """Candidate patches of one strategy for one violation (empty when it does not apply)."""
    return STRATEGIES[name][2](ctx, violation) if name in STRATEGIES else []


def candidates(ctx: Context, violation: Violation, prefer: list[str] = ()) -> list[Patch]:
    """Every candidate patch for a violation: preferred strategies first, then the library order."""
    return list(iter_candidates(ctx, violation, prefer))


def iter_candidates(ctx: Context, violation: Violation, prefer: list[str] = ()):
    """Candidate patches, smallest change set first (fewer removals, then preferred strategies, then the library
    order break ties): a minimal repair is tried before any larger one. With ctx.keep_values, patches that only
    remove come after every patch that adds something."""
    found = [p for name in dict.fromkeys([*prefer, *strategies_for(violation.component)])
             for p in run_strategy(name, ctx, violation)]
    yield from sorted(found, key=lambda p: (ctx.keep_values and not p.added, p.size, len(p.removed)))


def is_fixed_term(violation: Violation, shapes: Graph) -> bool:
    """True when a constraint judges the focus node's own term (node-level, or reached by a zero-length path such as
    sh:zeroOrMorePath) and no data edit can change that term."""
    v = violation
    if v.component not in TERM_COMPONENTS or (v.path is not None and v.value != v.focus):
        return False
    return not isinstance(v.focus, Literal) or (None, SH.targetNode, v.focus) in shapes
