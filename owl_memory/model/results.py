"""What whole-memory questions return: a search with its defining SPARQL, a SPARQL answer, a validation report."""

from __future__ import annotations

from dataclasses import dataclass

from .items import Hit


@dataclass(frozen=True)
class SearchExplanation:
    """A search's result with how it is defined: the SELECT (filter values bound, never pasted), its bindings and
    the engine that answered it ("fts5" embedded, "sparql" on a server)."""

    hits: tuple[Hit, ...]
    sparql: str
    bindings: dict
    engine: str

    def to_dict(self) -> dict:
        """JSON-compatible form: {hits, sparql, bindings, engine}."""
        return {"hits": [h.to_dict() for h in self.hits], "sparql": self.sparql, "bindings": dict(self.bindings),
                "engine": self.engine}


@dataclass(frozen=True)
class SparqlResult:
    """The answer to a read-only SELECT or ASK: column names, rows (ASK: one row of one bool) and whether rows were
    cut at the row cap."""

    columns: tuple[str, ...]
    rows: tuple[tuple, ...]
    truncated: bool

    def to_dict(self) -> dict:
        """JSON-compatible form: {columns, rows, truncated}."""
        return {"columns": list(self.columns), "rows": [list(r) for r in self.rows], "truncated": self.truncated}


@dataclass(frozen=True)
class ValidationReport:
    """Whether a memory (or some of its items) conforms to the memory shapes, with one message per problem."""

    conforms: bool
    violation_count: int
    messages: tuple[str, ...]

    def to_dict(self) -> dict:
        """JSON-compatible form: {conforms, violation_count, messages}."""
        return {"conforms": self.conforms, "violation_count": self.violation_count, "messages": list(self.messages)}
