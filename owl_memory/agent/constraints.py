"""Constraint items in use: hard requirements on the agent's queries, checked on each query's parsed form.

A Constraint item whose action schema is a `QueryConstraint` (model/judge_rules.py) applies to a run when it applies
to the run's ontology or to any ontology, and the run's condition lets memory in (every condition but A0). The
runner hands those to the toolbox; every ontology_query and endpoint_query is checked before it runs: the query still
runs, the tool's return gains a "constraints" list ("constraint <id> violated: ...") so the agent can fix it, the
trajectory gets a constraint_violation event per violation, and the run's metrics count them (constraint_violations).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from rdflib import Graph

from ..adapters import sparql as sparql_text
from ..model import MemoryAccess, QueryConstraint
from ..vocab import declared_ontology, serves_ontology

if TYPE_CHECKING:
    from ..store import Memory

SEARCH_K = 50
_SAYS = {"needs-limit": "the query needs a LIMIT",
         "needs-from-graph": "the query needs a FROM graph or a GRAPH <iri> pattern",
         "forbids-predicate": "the query must not use the predicate {value}"}


def query_constraints(memory: Memory | None, graph: Graph | None,
                      access: MemoryAccess) -> tuple[tuple[str, QueryConstraint], ...]:
    """(item id, constraint) of every Constraint item that applies to the run over `graph`, in search order."""
    if memory is None or not access.layers_read_memory:
        return ()
    run_ontology, out = declared_ontology(graph), []
    for hit in memory.search(kinds=("Constraint",), k=SEARCH_K):
        item = memory.get(hit.id)
        if isinstance(item.action_schema, QueryConstraint) and serves_ontology(item.applies_to, run_ontology):
            out.append((item.id, item.action_schema))
    return tuple(out)


def violations(sparql: str, constraints: Iterable[tuple[str, QueryConstraint]]) -> list[tuple[str, str]]:
    """(item id, message) for each constraint the query breaks; none for a query that does not parse (the guard
    refuses it with its own message)."""
    try:
        query = sparql_text.parse(sparql)
    except sparql_text.QuerySyntaxError:
        return []
    return [(id, _SAYS[c.requirement].format(value=c.value)) for id, c in constraints if _breaks(query, c)]


def _breaks(query, constraint: QueryConstraint) -> bool:
    """Whether a parsed query breaks one constraint."""
    if constraint.requirement == "needs-limit":
        return sparql_text.limit_of(query) is None
    if constraint.requirement == "needs-from-graph":
        return not sparql_text.dataset(query) and not sparql_text.graph_names(query)
    return constraint.value in sparql_text.predicates(query)
