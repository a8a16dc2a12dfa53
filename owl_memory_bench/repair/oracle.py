"""An oracle for what is repairable, independent of the repair operators.

It enumerates change sets (triples added and removed) over a finite universe built from the data, the shapes and
the initial violations only, smallest first, up to a bound; pySHACL judges each one. A change set counts when it
keeps the minimal-change rules the repairer also keeps (no shape triple or target type removed, removals touch a
violating node, every target stays a target but a conforming value dropped off a targeted property, no target or
focus node disappears). The answer: the minimal size of a
repair, or "none up to the bound", or "unknown" when the validation budget ran out first; asked for, also the least
cost of a repair within the bound (owl_memory.repair.cost: retyping a typed node and minting one cost more than a
value), the minimum the benchmark holds each repair to.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import combinations, islice

import exrex
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.collection import Collection

from owl_memory.repair import shape_triples, target_losses, target_nodes
from owl_memory.repair.cost import change_cost
from owl_memory.repair.verification import verify
from owl_memory.vocab import RDF, RDFS, SH, XSD

FRESH = URIRef("urn:owl-memory:oracle:new")
_DEFAULTS = {XSD.string: "a", XSD.integer: "0", XSD.int: "0", XSD.decimal: "0", XSD.boolean: "true",
             XSD.date: "2000-01-01", XSD.dateTime: "2000-01-01T00:00:00", XSD.float: "0", XSD.double: "0",
             XSD.anyURI: "http://example.org/", XSD.gYear: "2000", XSD.nonNegativeInteger: "0",
             XSD.positiveInteger: "1"}
_PAIR_PARAMS = (SH.equals, SH.disjoint, SH.lessThan, SH.lessThanOrEquals)
_CONSTANTS = (SH.hasValue, SH.minInclusive, SH.maxInclusive, SH.minExclusive, SH.maxExclusive)


@dataclass(frozen=True)
class OracleVerdict:
    """What the oracle found for one case.

    Args:
        status: "conforms" (nothing to repair), "repairable", "none" (no repair up to the bound) or "unknown".
        minimal_size: triples changed by the smallest repair found (None unless repairable).
        validations: pySHACL runs spent finding it.
        universe: atomic changes considered.
        minimal_cost: the least cost (owl_memory.repair.cost) of a repair within the bound, when asked for.
        cost_exact: False when the budget ran out before every cheaper change set was tried (minimal_cost is then
            the cheapest found, an upper bound).
        cost_validations: pySHACL runs spent on the cost search.
    """

    status: str
    minimal_size: int | None = None
    validations: int = 0
    universe: int = 0
    minimal_cost: int | None = None
    cost_exact: bool = True
    cost_validations: int = 0

    @property
    def repairable(self) -> bool:
        """True when a repair exists within the bound."""
        return self.status == "repairable"

    def to_dict(self) -> dict:
        """JSON-compatible form (the cost fields only when the cost was searched)."""
        out = {"status": self.status, "minimal_size": self.minimal_size, "validations": self.validations,
               "universe": self.universe}
        if self.minimal_cost is not None:
            out |= {"minimal_cost": self.minimal_cost, "cost_exact": self.cost_exact,
                    "cost_validations": self.cost_validations}
        return out


def oracle(data: Graph, shapes: Graph, *, max_size: int = 2, budget: int = 2500, cost: bool = False) -> OracleVerdict:
    """Search change sets of size 1..max_size (smallest first) for one that makes `data` conform; with `cost`, then
    search the change sets within the bound that cost less than the one found (cheapest first, on what is left of the
    budget) for the least cost of a repair."""
    first = verify(data, shapes)
    if first.conforms:
        return OracleVerdict("conforms", 0, 1, minimal_cost=0 if cost else None)
    foci = {v.focus for v in first.violations}
    values = {v.value for v in first.violations if v.value is not None}
    targets = target_nodes(data, shapes)
    protected = shape_triples(shapes) | _target_types(data, shapes)
    removals = sorted(t for t in data if t not in protected and (t[0] in foci | values or t[2] in foci | values))
    atoms = [("-", t) for t in removals] + [("+", t) for t in sorted(_additions(data, shapes, foci, values))
                                            if t not in data]
    spent, keep, tried = 1, {n for n in foci | targets if (n, None, None) in data}, set()  # nodes with data
    for size in range(1, max_size + 1):
        for combo in combinations(atoms, size):
            if not _allowed(data, shapes, combo, targets, keep, foci):
                continue
            if spent >= budget:
                return OracleVerdict("unknown", None, spent, len(atoms))
            spent += 1
            tried.add(combo)
            if verify(_applied(data, combo), shapes).conforms:
                found = OracleVerdict("repairable", size, spent, len(atoms))
                rules = (targets, keep, foci)
                return _cheapest(data, shapes, atoms, combo, tried, rules, budget - spent, max_size, found) \
                    if cost else found
    return OracleVerdict("none", None, spent, len(atoms))


def _cheapest(data: Graph, shapes: Graph, atoms: list, found: tuple, tried: set, rules: tuple, budget: int,
              max_size: int, verdict: OracleVerdict) -> OracleVerdict:
    """`verdict` with the least cost of a repair within the bound: the change sets not tried yet that cost less than
    `found`, cheapest first, until one conforms or the budget runs out."""
    best, spent = _cost(data, found), 0
    cheaper = sorted((c, combo) for size in range(1, min(max_size, best - 1) + 1)  # a change costs at least its size
                     for combo in combinations(atoms, size) if combo not in tried and (c := _cost(data, combo)) < best)
    for c, combo in cheaper:
        if not _allowed(data, shapes, combo, *rules):
            continue
        if spent >= budget:
            return replace(verdict, minimal_cost=best, cost_exact=False, cost_validations=spent)
        spent += 1
        if verify(_applied(data, combo), shapes).conforms:
            return replace(verdict, minimal_cost=c, cost_validations=spent)
    return replace(verdict, minimal_cost=best, cost_validations=spent)


def _cost(data: Graph, combo: tuple) -> int:
    """The cost of a change set (owl_memory.repair.cost, the measure the repairer minimizes)."""
    return change_cost(data, [t for sign, t in combo if sign == "+"], [t for sign, t in combo if sign == "-"])


def _target_types(data: Graph, shapes: Graph) -> set:
    """rdf:type triples that make a node a target of a shape."""
    classes = set(shapes.objects(None, SH.targetClass)) | set(shapes.subjects(RDF.type, RDFS.Class))
    sub = {s for c in classes for s in data.transitive_subjects(RDFS.subClassOf, c)}
    return {t for t in data.triples((None, RDF.type, None)) if t[2] in sub | classes}


def _path_predicates(shapes: Graph) -> tuple[set, set]:
    """(forward predicates, inverse predicates) named anywhere in the shapes' sh:path expressions."""
    fwd, inv = set(), set()
    todo = [(p, False) for p in shapes.objects(None, SH.path)]
    while todo:
        node, inverse = todo.pop()
        if isinstance(node, URIRef):
            (inv if inverse else fwd).add(node)
        elif isinstance(node, BNode):
            if shapes.value(node, RDF.first) is not None:
                todo += [(m, inverse) for m in Collection(shapes, node)]
            for p, o in shapes.predicate_objects(node):
                todo += [(m, inverse) for m in Collection(shapes, o)] if p == SH.alternativePath else \
                    [(o, not inverse if p == SH.inversePath else inverse)] if p != RDF.rest else []
    return fwd - {RDF.first, RDF.rest, RDF.nil}, inv


def _objects(data: Graph, shapes: Graph) -> set:
    """Candidate values: shape constants, listed members, a default per datatype, pattern matches, data nodes."""
    out = {o for p in _CONSTANTS for o in shapes.objects(None, p)}
    out |= {m for lst in shapes.objects(None, SH["in"]) for m in Collection(shapes, lst)}
    out |= {Literal(_DEFAULTS.get(d, "0"), datatype=d) if d != XSD.string else Literal("a")
            for d in shapes.objects(None, SH.datatype) if isinstance(d, URIRef) and d != RDF.langString}
    out |= {Literal("a", lang="en") for _ in shapes.triples((None, SH.datatype, RDF.langString))}
    for pat in shapes.objects(None, SH.pattern):
        out |= {Literal(x) for x in islice(exrex.generate(str(pat), limit=3), 1)}
    out |= {n for t in data for n in (t[0], t[2]) if not isinstance(n, BNode)}
    out |= {x for b in (SH.minExclusive, SH.maxExclusive) for o in shapes.objects(None, b) for x in _beside(o)}
    return out | {FRESH}


def _beside(bound) -> set:
    """Integer-valued literals one below and one above a numeric bound (what an exclusive bound admits)."""
    try:
        n = int(bound.toPython())
    except (AttributeError, TypeError, ValueError):
        return set()
    return {Literal(n - 1, datatype=bound.datatype), Literal(n + 1, datatype=bound.datatype)}


def _relabelled(data: Graph, shapes: Graph, values: set) -> set:
    """The violating literals' text under each datatype and language tag the shapes name."""
    texts = {str(v) for v in values if isinstance(v, Literal)}
    kinds = [{"datatype": d} for d in shapes.objects(None, SH.datatype) if d != RDF.langString]
    kinds += [{"lang": str(m)} for lst in shapes.objects(None, SH.languageIn) for m in Collection(shapes, lst)]
    return {Literal(x, **k) for x in texts for k in kinds}


def _additions(data: Graph, shapes: Graph, foci: set, values: set) -> set:
    """Triples worth adding: a path predicate from a focus to a candidate value (or back, for inverse paths),
    a class typing a focus or value node, and, for chains, a path predicate from the fresh node."""
    fwd, inv = _path_predicates(shapes)
    fwd |= {o for p in _PAIR_PARAMS for o in shapes.objects(None, p)}
    objs = _objects(data, shapes) | _relabelled(data, shapes, values)
    classes = set(shapes.objects(None, SH["class"])) | set(shapes.objects(None, SH.targetClass))
    nodes = {n for n in foci | values if not isinstance(n, Literal)}
    out = {(f, p, o) for f in nodes for p in fwd for o in objs}
    out |= {(o, p, f) for f in nodes for p in inv for o in objs if not isinstance(o, Literal)}
    out |= {(n, RDF.type, c) for n in nodes | {FRESH} for c in classes}
    if any(shapes.value(p, RDF.first) is not None for p in shapes.objects(None, SH.path)):
        out |= {(FRESH, p, o) for p in fwd for o in objs if o != FRESH}
    return {t for t in out if not isinstance(t[0], Literal)}


def _allowed(data: Graph, shapes: Graph, combo: tuple, targets: set, keep: set, foci: set) -> bool:
    """The minimal-change rules on a whole change set: targets stay targets (a conforming value dropped from a
    targeted property may stop being one: owl_memory.repair.target_losses), kept nodes keep a triple."""
    removed = {t for sign, t in combo if sign == "-"}
    if not removed:
        return True
    after = _applied(data, combo)
    if target_losses(targets, after, shapes, foci, removed):
        return False
    gone = {n for t in removed for n in (t[0], t[2]) if n in keep}
    return all(any(True for _ in after.triples((n, None, None))) or any(True for _ in after.triples((None, None, n)))
               for n in gone)


def _applied(data: Graph, combo: tuple) -> Graph:
    """A copy of `data` with a change set applied."""
    out = Graph()
    for t in data:
        out.add(t)
    for sign, t in combo:
        (out.remove if sign == "-" else out.add)(t)
    return out
