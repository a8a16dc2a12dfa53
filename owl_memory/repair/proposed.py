"""Proposer fallback: a proposer's change set as a patch, compiled as a template that replays without the LM."""

from __future__ import annotations

from ..adapters import rdflib as rdf
from ..errors import LoadError
from ..model import ChangeSet, Violation
from ..vocab import SH
from .context import Context
from .patch import Patch
from .registry import SPARQL_BASED, strategy

OPERATOR = "llm.propose"
THIS, VALUE = "$this", "$value"  # placeholders for the focus node and the violation's value in a compiled template
_CORE = tuple(SH[f"{c}ConstraintComponent"] for c in (
    "Class", "Datatype", "NodeKind", "MinCount", "MaxCount", "MinExclusive", "MinInclusive", "MaxExclusive",
    "MaxInclusive", "MinLength", "MaxLength", "Pattern", "LanguageIn", "UniqueLang", "Equals", "Disjoint", "LessThan",
    "LessThanOrEquals", "Not", "And", "Or", "Xone", "Node", "Property", "QualifiedMinCount", "QualifiedMaxCount",
    "Closed", "HasValue", "In", "SPARQL"))


def proposed_patch(v: Violation, change: ChangeSet) -> Patch | None:
    """A proposer's change set for `v` as a patch whose choice is its template (None when it changes nothing)."""
    if not change.added and not change.removed:
        return None
    choice = {"added": _template(v, change.added), "removed": _template(v, change.removed)}
    return Patch(OPERATOR, frozenset(change.added), frozenset(change.removed), frozenset({v.focus}), choice)


def _template(v: Violation, triples) -> list:
    """Triples as N3 term lists, the focus node and the violation's value replaced by placeholders."""
    names = {v.focus: THIS} | ({v.value: VALUE} if v.value is not None and v.value != v.focus else {})
    return sorted([names.get(x, x.n3()) for x in t] for t in triples)


def _ground(v: Violation, template: list) -> set | None:
    """The triples of a template for `v` (None when it is malformed or names a value `v` lacks)."""
    names = {THIS: v.focus, VALUE: v.value}
    out = set()
    for terms in template:
        if not isinstance(terms, list) or len(terms) != 3:
            return None
        t = tuple(names.get(x) if x in names else _term(x) for x in terms)
        if any(x is None for x in t):
            return None
        out.add(t)
    return out


def _term(text):
    """An N3 term, None when it does not parse."""
    try:
        return rdf.term(text) if isinstance(text, str) else None
    except LoadError:
        return None


@strategy(OPERATOR, *_CORE, SPARQL_BASED, bindings={"change set": "proposer, compiled as a template"})
def replay(ctx: Context, v: Violation) -> list[Patch]:
    """Replay a compiled proposer template (ctx.hint) on a violation: its removals must all be in the graph."""
    h = ctx.hint
    if not isinstance(h, dict) or "added" not in h:
        return []
    added, removed = _ground(v, h.get("added", [])), _ground(v, h.get("removed", []))
    if added is None or removed is None or any(t not in ctx.graph for t in removed):
        return []
    p = Patch(OPERATOR, frozenset(added), frozenset(removed), frozenset({v.focus}), h)
    return [p] if p.size else []

