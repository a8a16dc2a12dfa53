"""Competency questions: load them from YAML and evaluate SPARQL ASK / SELECT deterministically."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from rdflib import Graph, Literal, URIRef, Variable

from ..adapters import sparql as sparql_text
from ..errors import LoadError, QueryRefused
from ..rdfio import read_text

CQ_KEYS = {"id", "question", "query", "expected", "bindings"}
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,79}$")


@dataclass(frozen=True)
class CompetencyQuestion:
    """One competency question: a SPARQL ASK or SELECT and what it must return.

    Args:
        id: a short unique slug.
        question: the question in words.
        query: SPARQL text (ASK or SELECT); prefixes of the CQ file are declared for it.
        expected: ASK: true/false; SELECT: true (some row), an int (row count) or a list of rows.
        kind: "ASK" or "SELECT", read from the query.
        prefixes: prefix -> namespace IRI used when parsing.
        bindings: variable -> value bound before evaluation (never pasted into the query text).
    """

    id: str
    question: str
    query: str
    expected: object = True
    kind: str = "ASK"
    prefixes: dict = field(default_factory=dict)
    bindings: dict = field(default_factory=dict)

    def prepared(self):
        """The parsed query (rdflib), prefixes declared."""
        return _prepare(self.query, self.prefixes, self.id)


@dataclass
class CQResult:
    """The outcome of one competency question on one graph."""

    id: str
    passed: bool
    kind: str
    observed: bool | int  # ASK: the answer; SELECT: the row count
    expected: object
    error: str | None = None

    def to_dict(self) -> dict:
        """JSON-compatible form."""
        return {"id": self.id, "passed": self.passed, "kind": self.kind, "observed": self.observed,
                "expected": self.expected, "error": self.error}


def _prepare(query: str, prefixes: dict, cq_id: str):
    """Parse a CQ query and pass it through the read-only guard (no update, FROM or SERVICE); LoadError naming the
    CQ when it is not valid SPARQL or the guard refuses it."""
    try:
        return sparql_text.check_read_only(query, prefixes=prefixes)
    except QueryRefused as e:
        what = "invalid SPARQL" if e.cause == "syntax" else "refused"
        raise LoadError(f"competency question {cq_id!r}: {what} ({e}); fix the query text", source=cq_id) from e


def term(value, prefixes: dict):
    """An RDF term from a YAML value: <iri>, prefix:name, or a literal (numbers and booleans typed)."""
    if isinstance(value, bool | int | float):
        return Literal(value)
    text = str(value)
    if text.startswith("<") and text.endswith(">"):
        return URIRef(text[1:-1])
    prefix, sep, local = text.partition(":")
    if sep and prefix in prefixes and " " not in local:
        return URIRef(prefixes[prefix] + local)
    return Literal(text)


def load_cqs(source) -> list[CompetencyQuestion]:
    """Competency questions from a YAML file path, YAML text or parsed data ({prefixes, cqs} or a list)."""
    data, label = _read_yaml(source)
    if isinstance(data, list):
        data = {"cqs": data}
    if not isinstance(data, dict) or not isinstance(data.get("cqs"), list):
        raise LoadError("expected a mapping with a `cqs:` list (and optional `prefixes:`)", source=label)
    prefixes = {str(k): str(v) for k, v in (data.get("prefixes") or {}).items()}
    cqs = [_one_cq(item, prefixes, label, i) for i, item in enumerate(data["cqs"])]
    ids = [c.id for c in cqs]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise LoadError(f"duplicate competency question ids {dup}; give each CQ its own id", source=label)
    return cqs


def _read_yaml(source) -> tuple[object, str]:
    """Parsed YAML and a label for messages; LoadError with file and line on bad YAML."""
    if isinstance(source, dict | list):
        return source, "<data>"
    is_path = isinstance(source, Path) or ("\n" not in str(source) and str(source).endswith((".yaml", ".yml")))
    label = str(source) if is_path else "<text>"
    try:
        text = read_text(source) if is_path else str(source)
        return yaml.safe_load(text), label
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise LoadError(f"invalid YAML: {getattr(e, 'problem', e)}; fix the file", source=label,
                        line=mark.line + 1 if mark else None) from e


def _one_cq(item, prefixes: dict, label: str, index: int) -> CompetencyQuestion:
    """Validate and build one CQ from its YAML mapping."""
    if not isinstance(item, dict) or "id" not in item or "query" not in item:
        raise LoadError(f"competency question #{index + 1} needs at least `id:` and `query:`", source=label)
    unknown = sorted(set(item) - CQ_KEYS)
    if unknown:
        raise LoadError(f"competency question {item['id']!r} has unknown keys {unknown}; "
                        f"allowed: {sorted(CQ_KEYS)}", source=label)
    cq_id, query = str(item["id"]), str(item["query"])
    if not _ID.match(cq_id):
        raise LoadError(f"competency question id {cq_id[:40]!r} is not a slug; use letters, digits, - _ . : "
                        "(at most 80 characters, no spaces)", source=label)
    kind = _prepare(query, prefixes, cq_id).algebra.name
    if kind not in ("AskQuery", "SelectQuery"):
        raise LoadError(f"competency question {cq_id!r} is a {kind}; write it as ASK or SELECT", source=label)
    bindings = item.get("bindings") or {}
    if not isinstance(bindings, dict):
        raise LoadError(f"competency question {cq_id!r}: `bindings:` must map variable names to values",
                        source=label)
    return CompetencyQuestion(cq_id, str(item.get("question", "")), query, item.get("expected", True),
                              "ASK" if kind == "AskQuery" else "SELECT", prefixes,
                              {str(k).lstrip("?"): v for k, v in bindings.items()})


def bound_values(cq: CompetencyQuestion) -> dict:
    """The CQ's bindings as rdflib Variable -> term, ready for initBindings."""
    return {Variable(k): term(v, cq.prefixes) for k, v in cq.bindings.items()}


def _row_key(row: dict) -> tuple:
    """A sortable, comparable form of one result row: (variable, string value) pairs."""
    return tuple(sorted((str(k), "" if v is None else str(v)) for k, v in row.items()))


def _expected_rows(cq: CompetencyQuestion, expected: list) -> list[tuple]:
    """The expected SELECT rows (`cq.expected`, a list) in comparable form."""
    rows = []
    for row in expected:
        terms = {str(k).lstrip("?"): term(v, cq.prefixes) for k, v in row.items()}
        rows.append(_row_key(terms))
    return sorted(rows)


def evaluate(cq: CompetencyQuestion, graph: Graph) -> CQResult:
    """Run one CQ on a graph with its bound values (guarded, under the wall-time limit: QueryTimeout past it) and
    compare with what it expects."""
    result = sparql_text.evaluate(graph, cq.prepared(), bindings=bound_values(cq))
    if cq.kind == "ASK":
        observed = bool(result.ask)
        return CQResult(cq.id, observed == bool(cq.expected), "ASK", observed, bool(cq.expected))
    rows = sorted(_row_key(dict(zip(result.columns, r, strict=True))) for r in result.rows)
    return CQResult(cq.id, _select_passes(cq, rows), "SELECT", len(rows), cq.expected)


def _select_passes(cq: CompetencyQuestion, rows: list[tuple]) -> bool:
    """Whether SELECT rows meet `expected`: true = some row, int = that many rows, list = exactly these rows."""
    exp = cq.expected
    if isinstance(exp, bool):
        return bool(rows) == exp
    if isinstance(exp, int):
        return len(rows) == exp
    if isinstance(exp, list):
        wanted = _expected_rows(cq, exp)
        names = {k for key in wanted for k, _ in key}
        got = sorted(tuple(p for p in r if p[0] in names) for r in rows)
        return got == wanted
    return False


def evaluate_all(cqs: list[CompetencyQuestion], graph: Graph) -> list[CQResult]:
    """Every CQ on the graph, in file order."""
    return [evaluate(cq, graph) for cq in cqs]


def passed(results: list[CQResult], cq_id: str) -> bool:
    """Whether the CQ with this id passed among some results."""
    return any(r.id == cq_id and r.passed for r in results)
