"""pySHACL behind one door: every validation run the package makes, counted, and every use of pySHACL's internals.

Runs are counted by `counting()`: a block's counter sees the runs made inside it (nested blocks each see theirs), so
the repair benchmark and the tests measure a span without a process-wide tally. Shapes `prepare`d once for many
focused runs (the memory's item checks) carry their own copy of pySHACL's shape-evaluation method that looks up
constraint parameters by set; pySHACL's modules are never changed, so any other pySHACL user in the process sees
pySHACL as shipped. pySHACL is imported on first use (0.5 s of imports).
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import FunctionType, SimpleNamespace
from typing import TYPE_CHECKING

from rdflib import Graph, URIRef
from rdflib.namespace import RDF, RDFS, SH

if TYPE_CHECKING:
    from pyshacl.shapes_graph import ShapesGraph

_LOG = logging.getLogger("pyshacl-validate")
SPARQL_SECONDS = 60.0  # wall time one validation may take when its shapes run SPARQL (sh:sparql, SPARQL targets)
_KEYS = 4096  # (types, subclass axioms) keys a Prepared keeps at most


class RunCount:
    """pySHACL runs made inside one `counting()` block so far (`runs`)."""

    def __init__(self) -> None:
        """Start at zero."""
        self.runs = 0
        self._lock = threading.Lock()

    def add(self) -> None:
        """Count one run."""
        with self._lock:
            self.runs += 1


_COUNTS: ContextVar[tuple[RunCount, ...]] = ContextVar("pyshacl_run_counts", default=())


@contextmanager
def counting() -> Iterator[RunCount]:
    """Count the pySHACL runs made inside the block (in this thread or task): `with counting() as c: ...; c.runs`."""
    count = RunCount()
    token = _COUNTS.set((*_COUNTS.get(), count))
    try:
        yield count
    finally:
        _COUNTS.reset(token)


def _count() -> None:
    """Count one pySHACL Validator run in every open `counting()` block."""
    for count in _COUNTS.get():
        count.add()


def validate(data, **kwargs):
    """pyshacl.validate(data, **kwargs), counted, once the shapes' SPARQL passed `check_shapes`."""
    import pyshacl

    shapes = kwargs.get("shacl_graph")
    sparql = check_shapes(shapes if isinstance(shapes, Graph) else data)
    _count()
    with _limited(sparql):
        return pyshacl.validate(data, **kwargs)


def _limited(sparql: bool) -> contextlib.AbstractContextManager:
    """The wall time of a validation whose shapes run SPARQL (a hostile sh:sparql can be a cross product); none for
    SHACL Core alone, whose cost is linear in the data."""
    from .wall_time import time_limit

    return time_limit(SPARQL_SECONDS) if sparql else contextlib.nullcontext()


def check_shapes(shapes: Graph) -> bool:
    """Whether the shapes run any SPARQL, once every SPARQL text of a shapes graph (sh:select, sh:ask, sh:construct
    of constraints, validators, targets and rules; an sh:update is refused) passed the read-only guard before pySHACL
    runs any, with the prefixes the graph declares (sh:declare) and binds: QueryRefused naming the shape that holds
    the refused query."""
    from rdflib import Literal

    from ..errors import LoadError, QueryRefused
    from .sparql import check_read_only

    prefixes, found = {p: str(ns) for p, ns in shapes.namespaces()}, False
    for declared in shapes.objects(None, SH.declare):
        prefix, namespace = shapes.value(declared, SH.prefix), shapes.value(declared, SH.namespace)
        if prefix is not None and namespace is not None:
            prefixes[str(prefix)] = str(namespace)
    for key in (SH.select, SH.ask, SH.construct, SH.update):
        for holder, text in shapes.subject_objects(key):
            found = True
            shape = next(iter(shapes.subjects(None, holder)), holder) if not isinstance(holder, URIRef) else holder
            try:
                if key == SH.update or not isinstance(text, Literal):
                    raise QueryRefused("only a SELECT, ASK or CONSTRUCT literal may run here")
                check_read_only(str(text), prefixes=prefixes)
            except QueryRefused as e:
                where = f"the SPARQL in shape {shape.n3()} ({key.n3(shapes.namespace_manager)})"
                if e.cause == "syntax":  # a malformed shapes file, as pySHACL itself would report it
                    raise LoadError(f"{where} does not parse: {e}; fix that shape") from e
                raise QueryRefused(f"{where} is refused: {e}; fix or remove that shape") from e
    return found


def failure_of(error: Exception) -> str:
    """What an exception out of a pySHACL run means: "shapes" (pySHACL rejects the shapes graph), "target" (a
    SHACL-SPARQL target whose query does not parse or yields a row without ?this), "pattern" (an sh:pattern Python's
    re, which pySHACL matches with, cannot compile), else "other"."""
    from pyparsing import ParseException
    from pyshacl.errors import ReportableRuntimeError

    if isinstance(error, ReportableRuntimeError):
        return "shapes"
    if isinstance(error, KeyError | ParseException):
        return "target"
    return "pattern" if isinstance(error, re.error) else "other"


@dataclass(frozen=True)
class Prepared:
    """Shapes made ready for many runs (see `prepare`): pySHACL's harvested ShapesGraph and those of its shapes that
    declare targets (the only ones a run starts from; the others run when a targeted shape refers to them), split
    into shapes that target classes only (whether one targets a node depends on the node's types and the data's
    subclass axioms alone: `reached` keeps the answer by those) and the others (sh:targetNode, ...SubjectsOf,
    ...ObjectsOf); `parameters` is the constraint-parameter list its shapes search, with a set behind `in`."""

    shapes: ShapesGraph
    by_class: tuple
    by_node: tuple
    parameters: list = field(compare=False, repr=False)
    reached: dict = field(default_factory=dict, compare=False, repr=False)  # (types, axioms) -> shape IRIs
    sparql: bool = False  # whether its shapes run SPARQL (their runs are then held to SPARQL_SECONDS)
    rules: bool = False  # whether its shapes hold SHACL-AF rules or functions (a run then applies them first)

    @property
    def named(self) -> bool:
        """Whether every targeted shape has an IRI (pySHACL's use_shapes takes shapes by IRI)."""
        return all(isinstance(s.node, URIRef) for s in (*self.by_class, *self.by_node))

    def searched_parameters(self) -> list:
        """The constraint-parameter list each harvested shape's validate searches, one per shape (`_indexed` gives
        them all `parameters`)."""
        return [type(s).validate.__globals__["module"].CONSTRAINT_PARAMS[0] for s in self.shapes.shapes]


@dataclass(frozen=True, eq=False)
class ShippedCode:
    """pySHACL's own code as loaded now, which the adapter must leave as shipped: its Shape class and that class's
    validate, the (parameter list, parameter map) pair its shape module searches (None before pySHACL's first run,
    which sets it) and the constraint parameters pySHACL ships."""

    shape_class: type
    validate: object
    module_parameters: tuple | None
    all_parameters: list


def shipped_code() -> ShippedCode:
    """pySHACL's Shape class, its validate, its module's parameter pair and its full parameter list, as they are now."""
    import pyshacl.shape
    from pyshacl.constraints import ALL_CONSTRAINT_PARAMETERS

    shape = pyshacl.shape.Shape
    return ShippedCode(shape, shape.validate, getattr(pyshacl.shape, "CONSTRAINT_PARAMS", None),
                       ALL_CONSTRAINT_PARAMETERS)


def harvested_types(shapes: Graph) -> set[type]:
    """The classes of the shapes pySHACL's own ShapesGraph harvests from `shapes` (no adapter preparation)."""
    from pyshacl.shapes_graph import ShapesGraph

    return {type(s) for s in ShapesGraph(shapes).shapes}


def prepare(shapes: Graph) -> Prepared:
    """Shapes made ready once for many `validate_prepared` runs: copied into rdflib's context-free store (faster
    lookups than the default store; the prefixes of the IRIs they use kept for pySHACL's messages, not the dozens
    rdflib binds by default, which every report would bind again), harvested by pySHACL into its ShapesGraph now,
    not on every run, and each harvested shape given the indexed parameter list (`_indexed`)."""
    from pyshacl.shapes_graph import ShapesGraph

    sparql = check_shapes(shapes)
    g = Graph(store="SimpleMemory", bind_namespaces="none")
    iris = {str(term) for t in shapes for term in t if isinstance(term, URIRef)}
    for prefix, namespace in shapes.namespaces():
        if any(iri.startswith(str(namespace)) for iri in iris):
            g.bind(prefix, namespace)
    for t in shapes:
        g.add(t)
    harvested = ShapesGraph(g)
    parameters = _indexed(harvested.shapes)
    targets = {s: [list(found) for found in s.target()] for s in harvested.shapes}  # nodes, classes, implicit, ...
    by_class = tuple(s for s, t in targets.items() if (t[1] or t[2]) and not (t[0] or t[3] or t[4]))
    by_node = tuple(s for s, t in targets.items() if t[0] or t[3] or t[4])
    rules = (None, SH.rule, None) in g or any((None, RDF.type, kind) in g
                                              for kind in (SH.Function, SH.SPARQLFunction, SH.JSFunction))
    return Prepared(harvested, by_class, by_node, parameters, sparql=sparql, rules=rules)


class _Members(list):
    """A list whose `in` is a set lookup (one hash instead of a Python __eq__ per member)."""

    def __init__(self, items) -> None:
        """The members in order, and their set."""
        super().__init__(items)
        self.members = frozenset(items)

    def __contains__(self, item) -> bool:
        """Set membership."""
        return item in self.members


def _indexed(shapes) -> list:
    """Let these shapes find their constraint parameters by set lookup: for each predicate of each shape it runs,
    pySHACL's Shape.validate asks `p in` its list of ~40 parameter IRIs, ~3,700 rdflib __eq__ calls per item check
    (~0.5-0.9 ms of ~3). That method reads the list from its module (`module.CONSTRAINT_PARAMS`); these shapes become
    instances of a Shape subclass (no new slots) whose validate is pySHACL's own code run with a private module
    namespace, where the list has a set behind `in` (same members, same order; the copy pySHACL extends for SHACL-JS
    or advanced shapes is a plain list). pySHACL's modules and classes stay as shipped. Returns that list."""
    import pyshacl.shape
    from pyshacl.constraints import ALL_CONSTRAINT_PARAMETERS, CONSTRAINT_PARAMETERS_MAP

    parameters = _Members(ALL_CONSTRAINT_PARAMETERS)
    scope = SimpleNamespace(CONSTRAINT_PARAMS=(parameters, CONSTRAINT_PARAMETERS_MAP))
    method = pyshacl.shape.Shape.validate
    scoped = FunctionType(method.__code__, {**vars(pyshacl.shape), "module": scope}, method.__name__,
                          method.__defaults__, method.__closure__)
    indexed = type("IndexedShape", (pyshacl.shape.Shape,), {"__slots__": (), "validate": scoped})
    for shape in shapes:
        shape.__class__ = indexed
    return parameters


def validate_prepared(data: Graph, prepared: Prepared, focus_nodes: list | None = None,
                      advanced: bool = False) -> tuple:
    """pyshacl.validate(data, shacl_graph=..., inference="none", focus_nodes=..., advanced=...) against `prepare`d
    shapes: (conforms, report graph, report text); each Validator run it makes is counted.

    With focus nodes, each is checked only against the shapes that target it, named to pySHACL as `use_shapes` (one
    Validator run per group of focus nodes the same shapes target): the same results as the full run, which starts
    every shape, finds its targets and drops those not in focus (for a memory item: 2 of the 53 memory shapes instead
    of 53, and no target search once its kind was seen). Which shapes target a node is pySHACL's answer (its own
    target search), kept for class targets by the node's types and the data's subclass axioms."""
    from pyshacl.graph_abstraction import DataGraph

    graph = DataGraph.from_rdflib(data)
    if not focus_nodes or not prepared.named:
        return _run(graph, prepared, {"focus_nodes": focus_nodes, "advanced": advanced})
    axioms = frozenset(data.triples((None, RDFS.subClassOf, None)))
    found = [(s, set(s.focus_nodes(graph))) for s in prepared.by_node]
    groups: dict[tuple, list] = {}
    for node in (n for n in focus_nodes if isinstance(n, URIRef)):  # pySHACL drops other focus nodes too
        names = _by_class(prepared, graph, node, (frozenset(data.objects(node, RDF.type)), axioms))
        groups.setdefault(names + tuple(str(s.node) for s, nodes in found if node in nodes), []).append(node)
    runs = [_run(graph, prepared, {"focus_nodes": nodes, "use_shapes": list(names)})
            for names, nodes in groups.items() if names]
    return _merged(prepared, runs)


def validate_node(data: Graph, prepared: Prepared, node, shape, advanced: bool = False) -> tuple:
    """`node` checked against one harvested `shape` alone, whatever the shapes' targets (conforms, report graph,
    report text), counted as a run: pySHACL's own evaluation of that shape with `node` as its focus, as its Validator
    does for `use_shapes` with focus nodes, without starting (and finding the targets of) every other shape. Only for
    shapes without SHACL-AF rules or functions (`prepared.rules` false), which a whole run applies before any shape."""
    from pyshacl.graph_abstraction import DataGraph
    from pyshacl.validator import Validator

    assert not prepared.rules, "shapes with SHACL-AF rules or functions need a whole run"
    graph = DataGraph.from_rdflib(data)
    _count()
    validator = Validator(graph, shacl_graph=prepared.shapes.graph,
                          options={"inference": "none", "logger": _LOG, "advanced": advanced})
    validator.shacl_graph = prepared.shapes
    executor = validator.make_executor()
    for s in prepared.shapes.shapes:
        s.set_advanced(advanced)
    with _limited(prepared.sparql):
        conforms, results = prepared.shapes.lookup_shape_from_node(shape).validate(executor, graph, focus=[node])
    return (conforms, *Validator.create_validation_report(prepared.shapes, conforms, results))


def _by_class(prepared: Prepared, graph, node, key: tuple) -> tuple:
    """IRIs of the class-targeting shapes that target `node` (found by pySHACL the first time its key is seen)."""
    names = prepared.reached.get(key)
    if names is None:
        names = tuple(str(s.node) for s in prepared.by_class if node in s.focus_nodes(graph))
        if len(prepared.reached) >= _KEYS:
            prepared.reached.clear()
        prepared.reached[key] = names
    return names


def _run(graph, prepared: Prepared, options: dict) -> tuple:
    """One pySHACL Validator run over a DataGraph, given the harvested ShapesGraph instead of harvesting it again
    (counted)."""
    from pyshacl.validator import Validator

    _count()
    validator = Validator(graph, shacl_graph=prepared.shapes.graph,
                          options={"inference": "none", "logger": _LOG, **options})
    validator.shacl_graph = prepared.shapes
    with _limited(prepared.sparql):
        return validator.run()


def _merged(prepared: Prepared, runs: list[tuple]) -> tuple:
    """One (conforms, report, text) of several runs: each run's report graph merged (an empty conforming report when
    no shape targets a focus node)."""
    if len(runs) == 1:
        return runs[0]
    if not runs:
        from pyshacl.validator import Validator

        return (True, *Validator.create_validation_report(prepared.shapes, True, []))
    report = Graph(bind_namespaces="none")
    for _, g, _ in runs:
        report += g
    return all(c for c, _, _ in runs), report, "".join(text for _, _, text in runs)
