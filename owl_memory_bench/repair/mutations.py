"""A catalogue of violation-inducing edits: each kind turns conforming data into data that breaks one constraint."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from rdflib import BNode, Graph, Literal, URIRef

from owl_memory.repair import target_nodes
from owl_memory.repair.context import Context
from owl_memory.repair.patch import Patch, applied
from owl_memory.repair.paths import fresh
from owl_memory.repair.verification import re_flags
from owl_memory.vocab import RDF, SH, XSD

KINDS = ("remove_required", "retype_literal", "break_pattern", "add_surplus", "wrong_class", "wrong_node_kind",
         "outside_in")
MULTI = "multi"  # the kind of a mutation made of several independent edits


@dataclass(frozen=True)
class Mutation:
    """One edit of a data graph that should make it violate a shape.

    Args:
        kind: the edit kind (one of KINDS).
        focus: the node edited.
        shape: the property shape the edit targets.
        added: triples the edit adds.
        removed: triples the edit removes.
        parts: the single edits a MULTI mutation is made of (empty for a single edit).
    """

    kind: str
    focus: object
    shape: object
    added: frozenset = frozenset()
    removed: frozenset = frozenset()
    parts: tuple = ()

    def apply(self, g: Graph) -> Graph:
        """A copy of `g` with the edit made (`g` itself is not modified)."""
        return applied(g, Patch(self.kind, self.added, self.removed))

    @property
    def name(self) -> str:
        """A short stable label: kind, focus and path (a MULTI mutation: its parts' labels)."""
        if self.parts:
            return f"{MULTI}:" + "+".join(p.name for p in self.parts)
        t = next(iter(sorted(self.added | self.removed)), (None, "-", None))
        return f"{self.kind}:{_short(self.focus)}:{_short(t[1])}"


def _short(term) -> str:
    """The last segment of a term's text."""
    return str(term).rstrip("/#").rsplit("/", 1)[-1].rsplit("#", 1)[-1]


def mutations(data: Graph, shapes: Graph, kinds=KINDS) -> list[Mutation]:
    """Every edit of the catalogue that applies to `data`: one per kind, focus node and property shape. Focus nodes
    are the IRIs a node shape targets by any target kind (class, implicit class, sh:targetNode, sh:targetSubjectsOf,
    sh:targetObjectsOf; SPARQL targets aside); only property shapes with a predicate path are edited. An edit that
    makes a new subject or object for a sh:targetSubjectsOf / sh:targetObjectsOf target is left out: undoing it would
    delete a target node, which no repair may do. The order depends on the shapes' content, not on their blank-node
    labels, so every parse of a file gives the same list."""
    ctx, out, key = Context(data, shapes), [], _keys(shapes)
    for shape in sorted(set(shapes.subjects(SH.property, None)), key=key):
        for focus in sorted(n for n in target_nodes(data, shapes, shape) if isinstance(n, URIRef)):
            for ps in sorted(ctx.params(shape, "property"), key=key):
                path = ctx.param(ps, "path")
                if isinstance(path, URIRef):
                    out += [m for k in kinds for m in EDITS[k](ctx, focus, ps, path)]
    reaching, targets = _reaching(shapes), target_nodes(data, shapes)
    return [m for m in out if not _adds_target(m, reaching, targets)]


def _reaching(shapes: Graph) -> tuple[set, set]:
    """The predicates whose subjects (first) and objects (second) some node shape targets."""
    return set(shapes.objects(None, SH.targetSubjectsOf)), set(shapes.objects(None, SH.targetObjectsOf))


def _adds_target(m: Mutation, reaching: tuple[set, set], targets: set) -> bool:
    """True when `m` adds a triple making a node that is no target yet a subject or object a predicate target
    reaches."""
    subjects, objects = reaching
    return any((p in subjects and s not in targets) or (p in objects and o not in targets) for s, p, o in m.added)


def _keys(shapes: Graph):
    """A sort key for shape nodes that ignores blank-node labels: an IRI's text, a blank node's triples (recursively,
    sorted), so equal keys mean equal descriptions."""
    memo: dict = {}

    def key(node, seen=frozenset()) -> str:
        """The key of one node (a blank node met again on its own description is "cycle")."""
        if not isinstance(node, BNode):
            return node.n3()
        if node in seen:
            return "cycle"
        if node not in memo:
            inner = sorted(f"{p.n3()} {key(o, seen | {node})}" for p, o in shapes.predicate_objects(node))
            memo[node] = "[" + "; ".join(inner) + "]"
        return memo[node]

    return key


def combined(singles: list[Mutation], edits: int, count: int, seed: int = 0, violates=None) -> list[Mutation]:
    """Up to `count` MULTI mutations of `edits` independent single edits each, drawn from `singles` with a fixed seed:
    parts edit distinct (focus, property shape) pairs with disjoint triples, of distinct kinds while kinds last;
    `violates(mutation)` (when given) must hold for every part kept. Deterministic for a given seed."""
    rng, out, known = random.Random(seed), [], {}

    def good(m: Mutation) -> bool:
        """`violates(m)`, asked once per edit."""
        if m not in known:
            known[m] = violates is None or bool(violates(m))
        return known[m]

    for _ in range(count * 4):
        parts = _draw(rng, singles, edits, good)
        if len(parts) == edits and _merged(parts) not in out:
            out.append(_merged(parts))
        if len(out) == count:
            break
    return out


def _draw(rng: random.Random, singles: list[Mutation], edits: int, good) -> list[Mutation]:
    """Independent single edits in a random order, edits of a kind not drawn yet first."""
    order, parts = rng.sample(singles, len(singles)), []
    for new_kind in (True, False):
        for m in order:
            if len(parts) == edits:
                return parts
            if m in parts or (new_kind and m.kind in {p.kind for p in parts}):
                continue
            if all(_independent(m, p) for p in parts) and good(m):
                parts.append(m)
    return parts


def _independent(a: Mutation, b: Mutation) -> bool:
    """True when two edits touch different (focus, shape) pairs and no triple of one is in the other."""
    return (a.focus, a.shape) != (b.focus, b.shape) and not (a.added | a.removed) & (b.added | b.removed)


def _merged(parts: list[Mutation]) -> Mutation:
    """One MULTI mutation making every part's edit."""
    return Mutation(MULTI, parts[0].focus, parts[0].shape, frozenset().union(*(p.added for p in parts)),
                    frozenset().union(*(p.removed for p in parts)), tuple(parts))


def _values(ctx: Context, focus, path) -> list:
    """The values of `focus` on `path`, sorted."""
    return sorted(ctx.graph.objects(focus, path))


def remove_required(ctx: Context, focus, ps, path) -> list[Mutation]:
    """Drop every value of a property with sh:minCount >= 1."""
    have = _values(ctx, focus, path)
    if int(ctx.param(ps, "minCount") or 0) < 1 or not have:
        return []
    return [Mutation("remove_required", focus, ps, removed=frozenset((focus, path, v) for v in have))]


def retype_literal(ctx: Context, focus, ps, path) -> list[Mutation]:
    """Swap a literal of a property with sh:datatype for the same text typed otherwise."""
    d = ctx.param(ps, "datatype")
    have = [v for v in _values(ctx, focus, path) if isinstance(v, Literal)]
    if d is None or not have:
        return []
    new = Literal(str(have[0]), datatype=XSD.normalizedString if d == XSD.string else XSD.string)
    return [_swap("retype_literal", focus, ps, path, have[0], new)]


def break_pattern(ctx: Context, focus, ps, path) -> list[Mutation]:
    """Swap a value of a property with sh:pattern for a string the pattern does not match."""
    pattern, have = ctx.param(ps, "pattern"), _values(ctx, focus, path)
    if pattern is None or not have:
        return []
    flags = re_flags(ctx.param(ps, "flags"))
    bad = next((t for t in ("!", "~ ~", "0", "a", "") if re.search(str(pattern), t, flags) is None), None)
    if bad is None:
        return []
    new = Literal(bad, datatype=have[0].datatype) if isinstance(have[0], Literal) else Literal(bad)
    return [_swap("break_pattern", focus, ps, path, have[0], new)]


def add_surplus(ctx: Context, focus, ps, path) -> list[Mutation]:
    """Add one value more than sh:maxCount allows, of the same kind as the values there."""
    most, have = ctx.param(ps, "maxCount"), _values(ctx, focus, path)
    if most is None or len(have) < int(most) or not have:
        return []
    first = have[0]
    extra = Literal(f"{first} (2)", datatype=first.datatype, lang=first.language) if isinstance(first, Literal) \
        and first.datatype in (None, XSD.string) else first if isinstance(first, Literal) else fresh(focus, path, "+")
    if isinstance(first, Literal) and extra == first:
        return []
    added = {(focus, path, extra)} | {(extra, RDF.type, c) for c in ctx.graph.objects(first, RDF.type)
                                      if not isinstance(extra, Literal)}
    return [Mutation("add_surplus", focus, ps, added=frozenset(added))]


def wrong_class(ctx: Context, focus, ps, path) -> list[Mutation]:
    """Point a property with sh:class at a node of another class (a fresh node typed with some other class)."""
    cls, have = ctx.param(ps, "class"), _values(ctx, focus, path)
    if cls is None or not have or isinstance(have[0], Literal):
        return []
    other = URIRef(str(cls) + "-Other")
    node = fresh(focus, path, "wrong-class")
    return [Mutation("wrong_class", focus, ps, added=frozenset({(focus, path, node), (node, RDF.type, other)}),
                     removed=frozenset({(focus, path, have[0])}))]


def wrong_node_kind(ctx: Context, focus, ps, path) -> list[Mutation]:
    """Swap an IRI value for a literal where sh:nodeKind asks for IRIs, or a literal for an IRI where it asks for
    literals."""
    kind, have = ctx.param(ps, "nodeKind"), _values(ctx, focus, path)
    if kind is None or not have:
        return []
    if kind in (SH.IRI, SH.BlankNodeOrIRI) and isinstance(have[0], URIRef):
        return [_swap("wrong_node_kind", focus, ps, path, have[0], Literal(str(have[0])))]
    if kind == SH.Literal and isinstance(have[0], Literal):
        return [_swap("wrong_node_kind", focus, ps, path, have[0], fresh(focus, path, "iri"))]
    return []


def outside_in(ctx: Context, focus, ps, path) -> list[Mutation]:
    """Swap a value of a property with sh:in for one the list does not hold."""
    listed, have = ctx.listed(ps, "in"), _values(ctx, focus, path)
    if not listed or not have:
        return []
    new = Literal("unlisted") if isinstance(listed[0], Literal) else URIRef(str(listed[0]) + "-unlisted")
    return [] if new in listed else [_swap("outside_in", focus, ps, path, have[0], new)]


def _swap(kind: str, focus, ps, path, old, new) -> Mutation:
    """An edit replacing one value of `focus` on `path`."""
    return Mutation(kind, focus, ps, added=frozenset({(focus, path, new)}), removed=frozenset({(focus, path, old)}))


EDITS = {"remove_required": remove_required, "retype_literal": retype_literal, "break_pattern": break_pattern,
         "add_surplus": add_surplus, "wrong_class": wrong_class, "wrong_node_kind": wrong_node_kind,
         "outside_in": outside_in}
