"""A repair case (data, shapes and what is known about it), and the blank nodes only some subjects reach."""

from __future__ import annotations

from dataclasses import dataclass

from rdflib import BNode, Graph


@dataclass(frozen=True)
class Case:
    """One graph to repair against its shapes.

    Args:
        name: "<folder>/<file>" for a suite case, "<set>/<mutation>" for a mutation case.
        data: the data graph.
        shapes: the shapes graph (the same object as `data` when the case keeps both in one file).
        expected_conforms: the suite's expected result (False: a violation to repair; None when it states none).
        missing: files the case names that the data folder lacks (their graph is empty).
        same_file: data and shapes come from one file.
        kind: the mutation kind (None for a suite case).
        witness: the size of a known repair (the mutation's inverse edit), None when none is known.
        witness_cost: that repair's cost (owl_memory.repair.cost), None when none is known.
        shapes_left_out: node shapes left out of `shapes` (a SPARQL target pySHACL cannot run), one line each.
    """

    name: str
    data: Graph
    shapes: Graph
    expected_conforms: bool | None = False
    missing: tuple[str, ...] = ()
    same_file: bool = False
    kind: str | None = None
    witness: int | None = None
    witness_cost: int | None = None
    shapes_left_out: tuple[str, ...] = ()


def closure(g: Graph, seen: set) -> set:
    """`seen` plus the blank nodes reachable only from it."""
    grown = True
    while grown:
        fresh = {o for s in seen for o in g.objects(s, None) if isinstance(o, BNode) and o not in seen
                 and all(r in seen for r in g.subjects(None, o))}
        seen |= fresh
        grown = bool(fresh)
    return seen


def without(g: Graph, subjects: set) -> Graph:
    """A copy of `g` without the triples whose subject is in `subjects`."""
    kept = Graph()
    for t in g:
        if t[0] not in subjects:
            kept.add(t)
    return kept
