"""Results and handle tools: agent SPARQL runs in a query worker into a "results" handle of JSON lines, read a few
rows at a time with results_peek; handle_window reads any handle a tool returned, in capped windows."""

from __future__ import annotations

import json
from collections.abc import Callable

from rdflib import Graph, Literal, URIRef

from ...errors import OwlMemoryError, QueryRefused, ToolError
from ...model import AgentQuery, ConstraintViolation, sha256
from ..constraints import violations
from ..query_worker import QueryResult, QueryWorker
from .caps import MAX_LIST, as_int, as_text, dumps
from .toolbox import Toolbox, ToolFamily, family

PEEK_ROWS = 50  # rows one results_peek may return (20 by default)


@family
class ResultsTools(ToolFamily):
    """Reads of handles: query results by row, any payload handle by window."""

    order = 40
    names = ("handle_window", "results_peek")

    def handle_window(self, ref: str, start: int = 0, length: int = 512) -> dict | str:
        """Up to `length` characters of the payload behind handle `ref` ("sha256:…") from offset `start`."""
        key, box = as_text(ref, "ref").strip(), self.box
        box.store(key).ref(key)  # UnknownItem before anything is charged
        box.watch(key)
        window = box.store(key).read(key, as_int(start, "start"), as_int(length, "length"), budget=box.budget)
        return {**window.to_dict(), "budget_left": box.left()}

    def results_peek(self, handle: str, n: int = 20, offset: int = 0) -> dict | str:
        """Up to n rows (max 50) of a results handle from row `offset`; capped per read and by the budget."""
        key, box = as_text(handle, "handle").strip(), self.box
        if key not in box.results:
            raise ToolError("unknown results handle; pass the 'handle' value ontology_query returned")
        starts, first = box.results[key], max(0, as_int(offset, "offset"))
        total = len(starts) - 1
        last = min(total, first + max(1, min(as_int(n, "n"), PEEK_ROWS)))
        if first >= total:
            return {"rows": [], "offset": first, "total": total, "next": None}
        window = box.scratch.read(key, starts[first], starts[last] - starts[first], budget=box.budget)
        rows = _whole_rows(window.text)
        out = {"rows": rows or [], "offset": first, "total": total, "budget_left": box.left()}
        if not rows:  # one row longer than a read: show its start, flagged
            out["partial_row"] = window.text
        out["next"] = first + max(1, len(rows)) if first + max(1, len(rows)) < total else None
        return out


def run_query(box: Toolbox, name: str, graph: Callable[[], Graph], sparql: str, *, tool: str | None = None,
              bindings: dict[URIRef, URIRef | Literal] | None = None) -> dict:
    """Run a query in the worker over `name`'s graph (built by `graph()` when the worker first starts), `bindings`
    (placeholder IRI -> term) bound into its parsed form: ASK's answer, or a results handle with its row count. Its
    agent_query event names `tool` (default "<name>_query")."""
    sparql, tool = as_text(sparql, "sparql"), tool or f"{name}_query"
    broken = constraint_notes(box, name, sparql)
    if name not in box.workers:
        box.workers[name] = QueryWorker(graph(), box.query_limits)
    try:
        result = box.workers[name].query(sparql, bindings)
    except (QueryRefused, ToolError) as e:
        box.emit(failed_query(tool, name, sparql, e))
        raise
    out = {"ask": result.ask} if result.kind == "ASK" else store_rows(box, result)
    box.emit(answered_query(tool, name, sparql, result, out.get("handle")))
    return {**out, "constraints": broken} if broken else out


def answered_query(tool: str, source: str, sparql: str, result: QueryResult, handle: object) -> AgentQuery:
    """The agent_query event of a query that answered: its row count and results handle (the tool's return's
    "handle"), or ASK's answer."""
    asked = result.kind == "ASK"
    return AgentQuery(tool, source, sparql, sha256(sparql), None if asked else len(result.rows),
                      bool(result.ask) if asked else None, handle if isinstance(handle, str) else None)


def failed_query(tool: str, source: str, sparql: str, error: OwlMemoryError) -> AgentQuery:
    """The agent_query event of a query that failed: its error class and message."""
    return AgentQuery(tool, source, sparql, sha256(sparql), error=error.cause, message=str(error)[:300])


def constraint_notes(box: Toolbox, name: str, sparql: str) -> list[str]:
    """The run's Constraint items the query breaks (agent/constraints.py), counted and sent to the trajectory as
    constraint_violation events; one "constraint <id> violated: ..." line each for the tool's return."""
    if name == "memory" or not box.constraints:
        return []
    lines = []
    for id, message in violations(sparql, box.constraints):
        box.stats = box.stats.violated()
        box.emit(ConstraintViolation(f"{name}_query", id, message))
        lines.append(f"constraint {id} violated: {message}")
    return lines


def store_rows(box: Toolbox, result: QueryResult) -> dict:
    """Serialize query rows as JSON lines into a "results" blob; return its handle and row count (A4: the rows)."""
    columns, lines = list(result.columns), []
    for values in result.rows:
        box.vocabulary.update(text for kind, text in filter(None, values) if kind == "uri")
        lines.append(dumps({c: _term_text(v) for c, v in zip(columns, values, strict=False) if v is not None}))
    ref = box.scratch.put("".join(line + "\n" for line in lines), "results")
    starts, pos = [], 0
    for line in lines:
        starts.append(pos)
        pos += len(line) + 1
    box.results[ref.key] = starts + [pos]
    box.watch(ref.key)
    out = {"handle": ref.key, "rows": len(lines), "columns": columns[:MAX_LIST], "size": ref.size,
           "truncated": result.truncated}
    return {**out, "all_rows": [json.loads(line) for line in lines]} if box.access.uncapped else out


def _term_text(value: tuple[str, str]) -> str:
    """A (kind, text) term from a query worker as a short string: IRI, _:bnode, or the literal's lexical form."""
    kind, text = value
    return f"_:{text}" if kind == "bnode" else text


def _whole_rows(text: str) -> list[dict]:
    """The complete JSON lines at the start of a window (a cut last line is dropped)."""
    lines = text.split("\n")
    return [json.loads(line) for line in lines[:-1] if line]
