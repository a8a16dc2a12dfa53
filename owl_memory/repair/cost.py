"""What a change set costs: the measure a repair minimizes over a case's whole change set (the oracle uses it too).

Every triple added or removed costs 1. Two kinds of change cost more, because they reach beyond one value:
- retyping a node that already has a type (adding or removing an rdf:type on it): other shapes may start or stop
  targeting it, so RETYPE is added once per such node;
- minting a node (a node the graph does not hold that the change describes: a type or a value beside the link
  to it): MINT is added once per such node. A new node reached by one triple alone is a value, like a literal.
Typing an untyped node costs what its triple costs: it completes a description rather than changing one. What the
new type's shapes then require is part of the same change set (repair.completion), so it is paid for there.
"""

from __future__ import annotations

from rdflib import Graph, Literal

from ..vocab import RDF

RETYPE = 2  # on top of its triples, per existing node whose types change while it has (or had) another type
MINT = 2  # on top of its triples, per node the change creates


def change_cost(graph: Graph, added, removed) -> int:
    """The cost of adding `added` to and removing `removed` from `graph` (see the module doc)."""
    added, removed = set(added), set(removed)
    return len(added) + len(removed) + RETYPE * len(retyped(graph, added, removed)) + MINT * len(
        minted(graph, added))


def retyped(graph: Graph, added, removed) -> set:
    """Nodes of `graph` that have a type whose rdf:type triples the change touches."""
    touched = {s for s, p, _ in set(added) | set(removed) if p == RDF.type}
    return {s for s in touched if (s, RDF.type, None) in graph}


def minted(graph: Graph, added) -> set:
    """Nodes the change creates and describes: not in `graph`, and in more than one added triple (a type or a value
    beside the link to it). A new node added by one triple alone is a value, like a literal."""
    seen: dict = {}
    for t in added:
        for n in {t[0], t[2]}:
            if not isinstance(n, Literal):
                seen[n] = seen.get(n, 0) + 1
    return {n for n, k in seen.items() if k > 1 and not _present(graph, n)}


def _present(graph: Graph, node) -> bool:
    """True when `node` is the subject or object of a triple of `graph`."""
    return (node, None, None) in graph or (None, None, node) in graph
