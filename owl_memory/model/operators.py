"""Compiled operators: the typed action a memory item carries (its om:actionSchema), one variant per kind.

A compiled operator is what makes a memory item executable: the next run applies it by computation instead of
rereading prose. Every variant round-trips through its JSON form (`to_json` / `operator_from_json`), which is what the
memory graph stores (canonical JSON in om:actionSchema) and what packs and `--json` output carry.

- `RepairDecision`: a verified SHACL repair (strategy id, constraint component, the candidate it chose, where its
  values come from); keyed by a violation signature, an abstract signature or the component-and-role back-off.
- `FollowUp`: a fix learned to follow another one on the same shape (keyed "follows:<abstract>|<strategy>").
- `CqAnswer`: a competency question's verified delta, kept behind a blob handle (keyed "cq:<hex>").
- `QueryRecipe`: an agent's successful query pattern with the task's constants lifted to parameters.
- `ToolSequence`: the tools a run called, in order, when it ran no query.
- `JudgeRule` / `QueryConstraint` (model/judge_rules.py): a check learned from gold, a requirement on agent queries.
- `CustomAction`: an action schema owl-memory does not compile itself (a user's or a pack's), kept as its JSON.
A schema is read leniently: a strategy id with some of a decision's keys is that decision, the rest defaulted.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Union

from ..errors import InvalidItem
from ..vocab import IRI_TEXT, STANDARD_PREFIXES
from .judge_rules import JUDGE_RULE, QUERY_CONSTRAINT, JudgeRule, Parameter, QueryConstraint, placeholder

APPLY_DELTA = "apply_delta"
ONTOLOGY_QUERY = "ontology_query"
TOOL_SEQUENCE = "tool_sequence"
_DECISION_KEYS = {"operator", "component", "choice", "bindings"}


def canonical(value) -> str:
    """Canonical JSON of a JSON value (sorted keys, no spaces): how choices and schemas are compared and stored."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


@dataclass(frozen=True)
class RepairDecision:
    """A verified repair: strategy `operator` for constraint `component`, the candidate it chose and its bindings.

    Args:
        operator: the strategy id, e.g. "class.add_type".
        component: the constraint component (its IRI, or a short name) the decision repairs.
        choice: a small JSON value naming the candidate (an sh:or branch and its plan, a proposer template, ...);
            None when the strategy's default candidate is meant.
        bindings: where the strategy's parameters come from, in words ({"class": "shape sh:class"}).
    """

    operator: str
    component: str | None = None
    choice: object = field(default=None, hash=False)
    bindings: dict = field(default_factory=dict, hash=False)

    def to_json(self) -> dict:
        """The stored JSON form."""
        return {"operator": self.operator, "component": self.component, "choice": self.choice,
                "bindings": dict(self.bindings)}


@dataclass(frozen=True)
class FollowUp:
    """A fix to apply right after another one: strategy `operator` for `component`, its value taken per `value`.

    Args:
        operator: the strategy id that fixed the second violation.
        component: the second violation's constraint component.
        value: where the second violation's value comes from: "added" (a value the first patch wrote) or "none".
        choice: the strategy's recorded candidate, as in RepairDecision.
        bindings: parameter sources (empty: the strategy's own).
    """

    operator: str
    component: str | None
    value: str
    choice: object = field(default=None, hash=False)
    bindings: dict = field(default_factory=dict, hash=False)

    def to_json(self) -> dict:
        """The stored JSON form."""
        return {"operator": self.operator, "component": self.component, "value": self.value, "choice": self.choice,
                "bindings": dict(self.bindings)}


@dataclass(frozen=True)
class CqAnswer:
    """A competency question's verified answer: the delta (a blob key of its added / removed N-Triples) and size."""

    delta: str
    triples: int
    operator = APPLY_DELTA

    def to_json(self) -> dict:
        """The stored JSON form."""
        return {"operator": APPLY_DELTA, "delta": self.delta, "triples": self.triples}


@dataclass(frozen=True)
class QueryRecipe:
    """A query pattern that answered a task: its form, triple patterns (canonical variables, task constants lifted
    to parameters), number of filters and the parameters to bind."""

    form: str
    where: tuple[tuple[str, ...], ...]
    filters: int = 0
    parameters: tuple[Parameter, ...] = ()
    operator = ONTOLOGY_QUERY

    def to_json(self) -> dict:
        """The stored JSON form."""
        return {"operator": ONTOLOGY_QUERY, "form": self.form, "where": [list(t) for t in self.where],
                "filters": self.filters, "parameters": [{"name": p.name, "kind": p.kind} for p in self.parameters]}

    def sparql(self) -> str:
        """The recipe as a query to run: SELECT DISTINCT * (or ASK) over its triple patterns, each parameter a
        placeholder IRI (model.judge_rules.placeholder) for the caller to bind on the parsed form. Its FILTERs are
        counted, not stored, so a SELECT can answer more than the query it was lifted from. InvalidItem when a
        term is not one the extractor writes (a canonical variable, a parameter, an <IRI>, a standard CURIE or a
        property path of those)."""
        where = " ".join(" ".join(_recipe_term(t) for t in triple) + " ." for triple in self.where)
        prefixes = "".join(f"PREFIX {p} <{ns}> " for ns, p in STANDARD_PREFIXES.items())
        head = "SELECT DISTINCT *" if self.form == "select" else "ASK"
        return f"{prefixes}{head} WHERE {{ {where} }}"


_VARIABLE, _PARAMETER = re.compile(r"\?v\d+"), re.compile(r"\$p\d+")
_IRI = re.compile(f"<{IRI_TEXT}>")
_CURIE = re.compile(r"(rdf|rdfs|owl|xsd):[A-Za-z_][A-Za-z0-9_-]*")
_PATH = re.compile(rf"(?:{_IRI.pattern}|{_CURIE.pattern}|[()|/^+*?!])+")  # a property path as rdflib writes it


def _recipe_term(term: str) -> str:
    """One recipe term as query text (a parameter as its placeholder IRI); InvalidItem for anything else, so a stored
    recipe can only ever be a basic graph pattern."""
    if _VARIABLE.fullmatch(term) or _PATH.fullmatch(term):
        return term
    if _PARAMETER.fullmatch(term):
        return f"<{placeholder(term[1:])}>"
    raise InvalidItem(f"query recipe term {term[:80]!r} is not a variable, parameter, <IRI>, standard CURIE or path; "
                      "the item's action_schema was not written by owl-memory's extractor")


@dataclass(frozen=True)
class ToolSequence:
    """The tools a run called, in order (no repeats in a row), when it compiled no query."""

    tools: tuple[str, ...]
    operator = TOOL_SEQUENCE

    def to_json(self) -> dict:
        """The stored JSON form."""
        return {"operator": TOOL_SEQUENCE, "tools": list(self.tools)}


@dataclass(frozen=True)
class CustomAction:
    """An action schema of a kind owl-memory does not compile (a user's or a pack's), kept exactly as given."""

    data: dict = field(hash=False)

    @property
    def operator(self) -> str | None:
        """Its "operator" value, when it has one."""
        value = self.data.get("operator")
        return value if isinstance(value, str) else None

    def to_json(self) -> dict:
        """The stored JSON form: the schema as given."""
        return dict(self.data)


CompiledOperator = Union[RepairDecision, FollowUp, CqAnswer, QueryRecipe, ToolSequence, JudgeRule,  # noqa: UP007
                         QueryConstraint, CustomAction]
_TYPED = (RepairDecision, FollowUp, CqAnswer, QueryRecipe, ToolSequence, JudgeRule, QueryConstraint, CustomAction)


def operator_from_json(data) -> CompiledOperator | None:
    """The typed operator of a stored action schema (a dict, its JSON text, a typed operator or None)."""
    if data is None or isinstance(data, _TYPED):
        return data
    if isinstance(data, str):
        data = json.loads(data)
    if not isinstance(data, dict):
        raise InvalidItem(f"action_schema must be a JSON object, got {type(data).__name__}; pass a dict such as "
                          '{"operator": "class.add_type"}')
    try:
        canonical(data)
        return _parse(data)
    except (TypeError, ValueError, KeyError) as e:
        raise InvalidItem(f"action_schema {str(data)[:120]} is not a valid "
                          f"{data.get('operator', 'action')} schema ({e})") from e


def _parse(d: dict) -> CompiledOperator:
    """The variant a JSON schema is, by its operator and keys."""
    op = d.get("operator")
    if op == APPLY_DELTA:
        return CqAnswer(str(d["delta"]), int(d["triples"]))
    if op == ONTOLOGY_QUERY:
        where = tuple(tuple(str(x) for x in t) for t in d["where"])
        return QueryRecipe(str(d["form"]), where, int(d.get("filters", 0)),
                           tuple(Parameter(str(p["name"]), str(p["kind"])) for p in d.get("parameters", ())))
    if op == TOOL_SEQUENCE:
        return ToolSequence(tuple(str(t) for t in d["tools"]))
    if op == JUDGE_RULE:
        return JudgeRule.from_json(d)
    if op == QUERY_CONSTRAINT:
        return QueryConstraint.from_json(d)
    if not isinstance(op, str) or not set(d) <= _DECISION_KEYS | {"value"} or not isinstance(d.get("bindings") or {},
                                                                                              dict):
        return CustomAction(dict(d))
    bindings = dict(d.get("bindings") or {})
    if "value" in d:
        return FollowUp(op, d.get("component"), str(d["value"]), d.get("choice"), bindings)
    return RepairDecision(op, d.get("component"), d.get("choice"), bindings)


def stored_json(op: CompiledOperator | None) -> str | None:
    """Canonical JSON text of an operator, as om:actionSchema holds it (None for no operator)."""
    return None if op is None else canonical(op.to_json())
