"""The change list of a repair, for people and scripts: every triple added or removed, written with the data's own
prefixes, grouped by focus node and the violation its patch fixed, each added value labelled with where it comes
from (derived from the value it replaces and how, named by the shapes, synthetic, a new node, an existing node)."""

from __future__ import annotations

from dataclasses import dataclass

from rdflib import Graph, Literal, URIRef
from rdflib.collection import Collection

from ..vocab import RDF, SH, XSD
from .derive import derivations
from .patch import Candidate
from .synth import nudge

OTHER = "other changes"  # the group of delta triples no recorded patch names (none in a normal run)


@dataclass(frozen=True)
class Change:
    """One triple a repair added ("+") or removed ("-"), as N3 with the data's prefixes.

    Args:
        sign: "+" or "-".
        triple: subject, predicate and object as prefixed N3.
        origin: where an added value comes from ("derived from ...: trimmed", "from the shapes", "kept: the value
            of ..." (moved under the node it became), "synthetic", "new node", "existing node", "type"); None for a
            removal.
    """

    sign: str
    triple: tuple[str, str, str]
    origin: str | None = None

    @property
    def text(self) -> str:
        """The triple as one line of N3 (without the final dot)."""
        return " ".join(self.triple)

    def to_dict(self) -> dict:
        """JSON-compatible form."""
        return {"sign": self.sign, "triple": self.text, "origin": self.origin}


@dataclass(frozen=True)
class ChangeGroup:
    """The changes one patch made for one violation.

    Args:
        focus: the focus node (prefixed N3).
        violation: the violation in words: its constraint, path and value.
        signature: the violation's signature.
        operator: the strategy that made the patch.
        changes: the triples it added and removed that are in the final result, removals first.
    """

    focus: str
    violation: str
    signature: str
    operator: str
    changes: tuple[Change, ...]

    @property
    def synthetic(self) -> list[str]:
        """The added triples whose value the repair synthesized (said so in their origin)."""
        return [c.text for c in self.changes if c.origin in ("synthetic", "new node")]

    def to_dict(self) -> dict:
        """JSON-compatible form."""
        return {"focus": self.focus, "violation": self.violation, "signature": self.signature,
                "operator": self.operator, "changes": [c.to_dict() for c in self.changes]}


def change_list(original: Graph, shapes: Graph, applied: list[Candidate], added: set,
                removed: set) -> list[ChangeGroup]:
    """The final delta (`added`, `removed` against `original`) grouped by the patches that made it, in focus order;
    a delta triple no patch names goes to a last group of its own."""
    groups, left, named = [], set(added) | set(removed), constants(shapes)
    gone = {t[2]: t for t in sorted(removed) if isinstance(t[2], Literal)}  # the user's texts this repair removed
    for c in applied:
        v, p = c.violation, c.patch
        mine = sorted(t for t in (p.added | p.removed) if t in left)
        if not mine:
            continue
        left -= set(mine)
        changes = _changes(original, named, [t for t in mine if t in removed], [t for t in mine if t in added], gone)
        groups.append(ChangeGroup(_n3(original, v.focus), describe(original, shapes, v), v.signature, p.operator,
                                  changes))
    if left:
        changes = _changes(original, named, sorted(left & removed), sorted(left & added), gone)
        groups.append(ChangeGroup("-", OTHER, "-", "-", changes))
    return sorted(groups, key=lambda g: (g.focus == "-", g.focus, g.violation))


def describe(data: Graph, shapes: Graph, v) -> str:
    """A violation in words: "sh:class on prov:wasGeneratedBy, value ex:alice"."""
    comp = str(v.component).removeprefix(str(SH)).removesuffix("ConstraintComponent") if v.component else "?"
    name = f"sh:{_parameter(comp)}" if str(v.component).startswith(str(SH)) else _n3(shapes, v.component)
    where = f" on {_n3(shapes, v.path)}" if isinstance(v.path, URIRef) else \
        f" on {v.path_text}" if v.path is not None else ""
    value = f", value {_n3(data, v.value)}" if v.value is not None and v.value != v.focus else ""
    return f"{name}{where}{value}"


def _parameter(component: str) -> str:
    """The SHACL parameter a core component is named for, as SHACL spells it: MinCount -> minCount, SPARQL -> sparql,
    JS -> js (an all-capitals name is one word)."""
    return component.lower() if component.isupper() else component[:1].lower() + component[1:]


def _changes(data: Graph, named: set, removed: list, added: list, gone: dict | None = None) -> tuple[Change, ...]:
    """Removals then additions as Changes, each addition with its origin."""
    return tuple([Change("-", _triple(data, t)) for t in removed]
                 + [Change("+", _triple(data, t), origin(data, named, t, removed, gone)) for t in added])


def origin(data: Graph, named: set, t: tuple, removed: list, gone: dict | None = None) -> str:
    """Where the value of an added triple comes from (see Change.origin); `named`: the shapes' `constants`;
    `removed`: what the same patch removed; `gone`: literal -> a triple of the whole repair that removed it (a kept
    value moved under the node it became)."""
    s, p, o = t
    if p == RDF.type:
        return "type"
    old = next((r[2] for r in removed if r[:2] == (s, p) and isinstance(r[2], Literal)), None)
    if isinstance(o, Literal) and old is not None:
        how = _derived(old, o)
        if how is not None:
            return f"derived from {_n3(data, old)}: {how}"
    if o in named:
        return "from the shapes"
    kept = (gone or {}).get(o) if isinstance(o, Literal) else None
    if kept is not None:
        return f"kept: the value of {_n3(data, kept[0])} {_n3(data, kept[1])}"
    moved = _moved(s, o, [*removed, *(gone or {}).values()])
    if moved is not None:  # the same text taken off another predicate of the node, re-typed to this one's format
        return f"kept: the value of {_n3(data, moved[0])} {_n3(data, moved[1])}, re-typed"
    if isinstance(o, Literal):
        return "synthetic"
    return "existing node" if (o, None, None) in data or (None, None, o) in data else "new node"


def _moved(subject, value, removed: list) -> tuple | None:
    """A removed triple of `subject` whose literal has the text of `value` (a literal), or None."""
    if not isinstance(value, Literal):
        return None
    return next((r for r in sorted(removed) if r[0] == subject and isinstance(r[2], Literal)
                 and str(r[2]) == str(value)), None)


def _derived(old: Literal, new: Literal) -> str | None:
    """How `new` is derived from `old` (same text re-typed or re-tagged, a text rule, truncated, padded, converted),
    or None when it is not."""
    if str(new) == str(old):
        return "re-tagged" if new.language != old.language else "re-typed"
    rules = {lit: how for how, lit in derivations(old, new.datatype or (None if new.language else XSD.string))}
    if new in rules:
        return rules[new]
    if str(old).startswith(str(new)):
        return "truncated"
    if str(new).startswith(str(old)):
        return "padded"
    try:
        same = old.toPython() == new.toPython() or float(str(old)) == float(str(new))
    except (TypeError, ValueError):
        same = False
    return "converted" if same else None


def constants(shapes: Graph) -> set:
    """Terms the shapes name as values: sh:hasValue, sh:in members, sh:defaultValue, range bounds (an exclusive bound
    moved one step inward)."""
    out = {o for p in (SH.hasValue, SH.defaultValue, SH.minInclusive, SH.maxInclusive) for o in shapes.objects(None, p)}
    nudged = (nudge(b, sign) for p, sign in ((SH.minExclusive, 1), (SH.maxExclusive, -1))
              for b in shapes.objects(None, p) if isinstance(b, Literal))
    out |= {n for n in nudged if n is not None}
    return out | {m for head in shapes.objects(None, SH["in"]) for m in Collection(shapes, head)}


def _triple(g: Graph, t: tuple) -> tuple[str, str, str]:
    """A triple's terms as N3 with `g`'s prefixes."""
    s, p, o = t
    return _n3(g, s), _n3(g, p), _n3(g, o)


def _n3(g: Graph, term) -> str:
    """One term as N3 with `g`'s prefixes, an IRI under `g`'s base relative to it, as the input wrote it."""
    if term is None:
        return "-"
    text = term.n3(g.namespace_manager)
    base = g.base
    if base and isinstance(term, URIRef) and text.startswith("<") and str(term).startswith(base) and str(term) != base:
        return f"<{str(term)[len(base):]}>"
    return text
