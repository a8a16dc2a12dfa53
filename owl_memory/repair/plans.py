"""Nested repairs and compiled plans: descend into sh:node / logical members, record and replay the steps."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.collection import Collection
from rdflib.term import Node

from ..model import Violation, sha256
from ..vocab import RDF, RDFS, SH, ordered
from .conformance import instances
from .context import Context
from .patch import Patch, applied, merge, replace_value
from .paths import values
from .registry import STRATEGIES, candidates, run_strategy
from .synth import convert, default_literal
from .verification import path_text

MAX_DEPTH = 3


SELF_CHECKING = frozenset({"class.add_type", "minCount.add_values", "hasValue.add_value", "maxCount.drop_surplus",
                           "range.clamp", "datatype.cast", "minLength.pad", "maxLength.truncate", "node.descend",
                           "and.descend"})


def value_rule(v: Violation, node, p: Patch) -> str | None:
    """Where a nested violation's value comes from: "none", "node" (the node itself), "each" value, or None."""
    if v.value is None:
        return "none"
    if v.value == node:
        return "node"
    swaps = isinstance(p.choice, dict) and p.choice.get("kind") == "swap"
    return "each" if p.operator in SELF_CHECKING and not swaps else None


def planned(ctx: Context, total: Patch, node, shapes_list, done: list) -> Patch:
    """`total` carrying its compiled plan: the steps taken plus every count/value rule of the shapes (None: none)."""
    if any(step[2] is None for step in done):
        return total
    steps = list(done)
    for s in shapes_list:
        for ps in [s, *ctx.params(s, "property")]:
            steps += [[shape_key(ctx.shapes, ps), op, "none", None] for comp, op in _FILLERS
                      if ctx.param(ps, comp) is not None and ctx.param(ps, "path") is not None]
    plan = {"kind": "descend", "shape": _members_key(ctx, shapes_list), "steps": _unique(steps)}
    return Patch(total.operator, total.added, total.removed, total.touches, plan)


_FILLERS = (("minCount", "minCount.add_values"), ("hasValue", "hasValue.add_value"))
_FILLS = frozenset(op for _, op in _FILLERS)


def adapted(ctx: Context, plan: dict, shapes_list) -> dict | None:
    """A descent plan compiled on other member shapes, re-derived for `shapes_list` when its rule names no shape:
    every recorded step fills a required value (sh:minCount / sh:hasValue), so it becomes "fill what these members
    require"; None when a step does anything else (that step only fits the shapes it was learned on)."""
    steps = plan.get("steps")
    if plan.get("kind") != "descend" or not isinstance(steps, list) or not steps:
        return None
    if any(not isinstance(s, list) or len(s) != 4 or s[1] not in _FILLS or s[2] != "none" for s in steps):
        return None
    choice = planned(ctx, Patch("adapted"), None, shapes_list, []).choice
    return choice if isinstance(choice, dict) else None


def _unique(steps: list) -> list:
    """Steps without repeats (first occurrence kept)."""
    out = []
    for s in steps:
        if s not in out:
            out.append(s)
    return out


def replay_descend(name: str, ctx: Context, node, shapes_list, plan: dict, focus) -> list[Patch]:
    """Apply compiled descent steps to `node` with no trial checks; [] when the shapes differ or nothing changes."""
    p = run_steps(name, ctx, node, shapes_list, plan, focus)
    return [p] if p is not None and p.size else []


def run_steps(name: str, ctx: Context, node, shapes_list, plan: dict, focus) -> Patch | None:
    """The patch a compiled plan's steps derive for `node` (maybe empty), the plan adapted when it was compiled on
    other member shapes; None when it does not fit."""
    if node is None or ctx.depth >= MAX_DEPTH:
        return None
    if plan.get("shape") != _members_key(ctx, shapes_list):
        fitted = adapted(ctx, plan, shapes_list)
        if fitted is None:
            return None
        plan = fitted
    total, work = Patch(name, touches=frozenset({focus})), ctx.graph
    for key, op, rule, choice in plan.get("steps", []):
        shape = find_shape(ctx.shapes, shapes_list, key)
        if shape is None:
            return None
        for v in _synthetic(ctx.bare(work, ctx.depth), node, shape, rule, op):
            got = run_strategy(op, ctx.bare(work, ctx.depth + 1, choice), v)
            if got:
                work, total = applied(work, got[0]), merge(name, total, got[0])
    return Patch(name, total.added, total.removed, total.touches, plan)


def _synthetic(ctx: Context, node, shape, rule: str, operator: str) -> list[Violation]:
    """The violations a compiled step stands for, built from the shape (no validation run)."""
    path = ctx.param(shape, "path")
    base = Violation(focus=node, shape=shape, path=path,
                     component=STRATEGIES[operator].component if operator in STRATEGIES else None)
    if rule == "none":
        return [base]
    if rule == "node":
        return [replace(base, value=node)]
    return [replace(base, value=x) for x in values(ctx, node, path)] if rule == "each" else []


def _members_key(ctx: Context, shapes_list) -> str:
    """The fingerprint of a list of member shapes."""
    return "+".join(shape_key(ctx.shapes, s) for s in shapes_list)


def shape_key(shapes: Graph, shape) -> str:
    """A stable fingerprint of a shape: its IRI (or "_") and its constraints, blank nodes described by content."""
    head = shape.n3() if isinstance(shape, URIRef) else "_"
    body = sorted(f"{p.n3()} {_describe(shapes, o, 1)}" for p, o in shapes.predicate_objects(shape))
    return sha256(head + "[" + "; ".join(body) + "]")[:16]


def _describe(shapes: Graph, node, depth: int) -> str:
    """Canonical text of a term: IRIs and literals as N3, lists and blank nodes by their content."""
    if not isinstance(node, BNode) or depth > 8:
        return node.n3() if not isinstance(node, BNode) else "[...]"
    if shapes.value(node, RDF.first) is not None:
        return "(" + " ".join(_describe(shapes, m, depth + 1) for m in Collection(shapes, node)) + ")"
    return "[" + "; ".join(sorted(f"{p.n3()} {_describe(shapes, o, depth + 1)}"
                                  for p, o in shapes.predicate_objects(node))) + "]"


def find_shape(shapes: Graph, roots, key: str):
    """The shape with fingerprint `key` among `roots` and the shapes they reach (a few hops), or None."""
    seen, todo = set(), [(r, 0) for r in roots]
    while todo:
        node, depth = todo.pop(0)
        if node in seen or isinstance(node, Literal):
            continue
        seen.add(node)
        if shape_key(shapes, node) == key:
            return node
        if depth < 4:
            todo += [(o, depth + 1) for _, o in sorted(shapes.predicate_objects(node)) if isinstance(o, BNode | URIRef)]
    return None


def descend_all(name: str, ctx: Context, node, shapes_list, focus) -> list[Patch]:
    """One patch making `node` conform to every shape in the list, by repairing its nested violations (found by
    trial checks, unless the member shapes hold only counts and required values the memory has learned to meet)."""
    if node is None or ctx.depth >= MAX_DEPTH or None in shapes_list:
        return []
    derived = learned_descent(name, ctx, node, shapes_list, focus)
    if derived is not None:
        return [derived]
    total, work, done = Patch(name, touches=frozenset({focus})), ctx.graph, list[list]()
    for _ in range(3):
        nested = [x for s in shapes_list for x in ctx.nested(node, s, work)]
        if not nested:
            return [planned(ctx, total, node, shapes_list, done)]
        step = _first_fixes(ctx.deeper(work), nested, node, done)
        if step is None:
            return []
        work, total = applied(work, step), merge(name, total, step)
    return [planned(ctx, total, node, shapes_list, done)] if not any(ctx.nested(node, s, work)
                                                                       for s in shapes_list) else []


_COUNTS: Mapping[Node, str] = MappingProxyType({
    SH.minCount: "minCount.add_values", SH.maxCount: "maxCount.drop_surplus", SH.hasValue: "hasValue.add_value"})
_INERT = frozenset({RDF.type, RDFS.label, RDFS.comment, SH.path, SH.name, SH.description, SH.message, SH.severity,
                    SH.order, SH.group, SH.targetNode, SH.targetClass, SH.targetSubjectsOf,
                    SH.targetObjectsOf})  # constrain no value


def learned_descent(name: str, ctx: Context, node, shapes_list, focus) -> Patch | None:
    """`node` made to meet member shapes that hold only sh:minCount / sh:maxCount / sh:hasValue on predicate paths,
    by the strategies the memory verified for those components (ctx.learned, under each one's abstract key), with no
    trial check: the counts are read off the data and the round's re-verify confirms the patch. None when a member
    holds anything else or the memory has not learned a strategy it needs (the library then checks)."""
    steps = _count_steps(ctx, node, shapes_list)
    if steps is None:
        return None
    total, work, done = Patch(name, touches=frozenset({focus})), ctx.graph, []
    for v, op, _ in steps:
        got = run_strategy(op, ctx.bare(work, ctx.depth + 1), v)
        if got:
            work, total = applied(work, got[0]), merge(name, total, got[0])
            done.append([shape_key(ctx.shapes, v.shape), op, "none", None])
    if not all(_meets(ctx, work, node, v.shape, v.path, param) for v, _, param in steps):
        return None
    return planned(ctx, total, node, shapes_list, done)


def _count_steps(ctx: Context, node, shapes_list) -> list | None:
    """(synthetic violation, learned strategy, parameter) for every constraint of the member shapes and their
    property shapes; None when one is not a count or required value on a predicate path, or is not learned."""
    if ctx.learned is None or isinstance(node, Literal):
        return None
    out = []
    for s in shapes_list:
        own = ctx.param(s, "path") is None  # a node shape: its sh:property shapes are read, one level
        for ps in [s, *(ctx.params(s, "property") if own else [])]:
            path = ctx.param(ps, "path")
            for p in ordered(set(ctx.shapes.predicates(ps, None))):
                if p in _INERT or (p == SH.property and ps is s and own):
                    continue
                op = _COUNTS.get(p)
                if op is None or not isinstance(path, URIRef):
                    return None
                v = Violation(focus=node, component=STRATEGIES[op].component, shape=ps, path=path,
                              path_text=path_text(ctx.shapes, path))
                if not ctx.learned(v, op):
                    return None
                out.append((v, op, p))
    return out or None


def _meets(ctx: Context, graph: Graph, node, shape, path, param) -> bool:
    """True when `node` meets one count or required value of `shape` along a predicate path in `graph`."""
    have, want = set(graph.objects(node, path)), ctx.param(shape, str(param).removeprefix(str(SH)))
    if param == SH.hasValue:
        return want in have
    n = int(want)
    return len(have) >= n if param == SH.minCount else len(have) <= n


def _first_fixes(ctx: Context, nested: list[Violation], node, done: list) -> Patch | None:
    """The first candidate of each nested violation, merged (each recorded in `done`); None when one has none."""
    total = Patch("nested")
    for v in nested:
        cands = candidates(ctx, v)
        if not cands:
            return None
        best = cands[0]
        done.append([shape_key(ctx.shapes, v.shape), best.operator, value_rule(v, node, best), best.choice])
        total = merge("nested", total, best)
    return total


def replay_member(name: str, ctx: Context, v: Violation, member, plan: dict) -> list[Patch]:
    """Apply a compiled plan for `member` without trial checks: a swap by its rule (hasValue, in, convert, default,
    instance: no shape named, so it fits any member that rule yields a value for), or descent steps."""
    if plan.get("kind") == "swap" and isinstance(plan.get("option"), str):
        return swap_term(name, ctx, v, member, only=plan.get("option"))
    if plan.get("kind") == "descend":
        return replay_descend(name, ctx, v.value, [member], plan, v.focus)
    return []


def _swap_options(ctx: Context, val: Literal, shape) -> list[tuple]:
    """(rule, value) pairs a literal may be swapped for: hasValue, first listed, converted, default, instance."""
    d, listed, cls = ctx.param(shape, "datatype"), ctx.listed(shape, "in"), ctx.param(shape, "class")
    out = [("hasValue", ctx.param(shape, "hasValue")), ("in", (listed or [None])[0])]
    out += [("convert", convert(val, d)), ("default", default_literal(d))] if d is not None else []
    return out + [("instance", (instances(ctx.graph, cls) or [None])[0])] if cls is not None else out


def swap_term(name: str, ctx: Context, v: Violation, shape, only: str | None = None) -> list[Patch]:
    """Swap a literal for one derived from `shape` that conforms to it (checked, unless `only` names the rule)."""
    val = v.value
    if not isinstance(val, Literal) or ctx.depth >= MAX_DEPTH:
        return []
    for rule, new in _swap_options(ctx, val, shape):
        if new is None or only not in (None, rule):
            continue
        plan = {"kind": "swap", "shape": shape_key(ctx.shapes, shape), "option": rule}
        for p in replace_value(name, ctx, v, new, plan):
            if only is not None or ctx.conforms(new, shape, applied(ctx.graph, p)):
                return [p]
    return []
