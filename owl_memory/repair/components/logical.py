"""Logical constraint components (SHACL 4.6): sh:not, sh:and, sh:or, sh:xone."""

from __future__ import annotations

from rdflib import Literal, URIRef

from ...model import Violation
from ...vocab import RDF, RDFS, SH, XSD
from ..context import Context
from ..patch import Patch, applied, drop_value, merge, replace_value
from ..plans import descend_all, planned, replay_descend, replay_member, run_steps, shape_key, swap_term
from ..registry import strategy


@strategy("and.descend", SH.AndConstraintComponent,
          bindings={"shapes": "shape sh:and"}, checks=True)
def and_descend(ctx: Context, v: Violation) -> list[Patch]:
    """sh:and: repair the value node against every member shape."""
    members = ctx.listed(v.shape, "and")
    if isinstance(ctx.hint, dict):
        return replay_descend("and.descend", ctx, v.value, members, ctx.hint, v.focus)
    return descend_all("and.descend", ctx, v.value, members, v.focus)


@strategy("or.satisfy_branch", SH.OrConstraintComponent,
          bindings={"shapes": "shape sh:or", "branch": "choice"}, checks=True)
def or_branch(ctx: Context, v: Violation) -> list[Patch]:
    """sh:or: make the value conform to one member shape (or swap a literal for one that does); smallest first."""
    members = ctx.listed(v.shape, "or")
    if isinstance(ctx.hint, dict):
        return _replay_branch("or.satisfy_branch", ctx, v, members, ctx.hint)
    out = []
    for i, member in enumerate(members):
        found = descend_all("or.satisfy_branch", ctx, v.value, [member], v.focus)
        found = found or swap_term("or.satisfy_branch", ctx, v, member)
        out += [Patch(p.operator, p.added, p.removed, p.touches, _branch(i, p.choice)) for p in found]
    return sorted(out, key=lambda p: p.size)


def _branch(i: int, plan) -> dict | None:
    """The compiled choice of an sh:or branch: its position plus the plan that repaired it (None: no plan)."""
    return {"branch": i, "plan": plan} if isinstance(plan, dict) else None


def _replay_branch(name: str, ctx: Context, v: Violation, members: list, hint: dict) -> list[Patch]:
    """Apply a compiled branch choice (`hint`, the context's) with no trial checks: the recorded branch when its plan
    names that member, else the plan's rule on each member (the smallest patch); [] when nothing fits these shapes."""
    i, plan = hint.get("branch"), hint.get("plan")
    if not isinstance(plan, dict):
        return []
    if isinstance(i, int) and 0 <= i < len(members) and plan.get("shape") == shape_key(ctx.shapes, members[i]):
        return [Patch(p.operator, p.added, p.removed, p.touches, hint)
                for p in replay_member(name, ctx, v, members[i], plan)]
    found = [Patch(p.operator, p.added, p.removed, p.touches, _branch(j, p.choice))
             for j, m in enumerate(members) for p in replay_member(name, ctx, v, m, plan)]
    return sorted(found, key=lambda p: p.size)[:1]


@strategy("xone.satisfy_one", SH.XoneConstraintComponent,
          bindings={"shapes": "shape sh:xone", "keep": "choice"}, checks=True)
def xone_one(ctx: Context, v: Violation) -> list[Patch]:
    """sh:xone: make the value conform to exactly one member shape (repair one, break the others)."""
    members, node, out, name = ctx.listed(v.shape, "xone"), v.value, [], "xone.satisfy_one"
    if isinstance(ctx.hint, dict):
        return _replay_xone(ctx, v, members, ctx.hint)
    ok = [ctx.conforms(node, m) for m in members]
    for i, m in enumerate(members):
        base = [planned(ctx, Patch(name), node, [m], [])] if ok[i] else \
            descend_all(name, ctx, node, [m], v.focus) or swap_term(name, ctx, v, m)
        out += [p for p in (_break_others(ctx, v, members, i, b) for b in base) if p is not None and p.size]
    return sorted(out, key=lambda p: p.size)


def _break_others(ctx: Context, v: Violation, members: list, i: int, p: Patch) -> Patch | None:
    """`p` plus a checked patch breaking each other member the value still conforms to; the choice records all."""
    work, breaks, node, plan = applied(ctx.graph, p), [], _new_value(p, v.value), p.choice
    for j, other in enumerate(members):
        if j != i and ctx.conforms(node, other, work):
            br = _break(ctx.deeper(work), node, other, v)
            if not br:
                return None
            work, p = applied(work, br[0]), merge(p.operator, p, br[0])
            breaks.append([j, br[0].choice])
    stable = isinstance(plan, dict) and all(isinstance(kind, str) for _, kind in breaks)
    choice = {"branch": i, "plan": plan, "breaks": breaks} if stable else None
    return Patch(p.operator, p.added, p.removed, p.touches | {v.focus}, choice)


def _new_value(p: Patch, value):
    """The term a patch puts in place of `value` (a swapped literal), else `value` itself."""
    return next((t[2] for t in sorted(p.added) for r in p.removed if r[2] == value and r[:2] == t[:2]), value)


def _replay_xone(ctx: Context, v: Violation, members: list, h: dict) -> list[Patch]:
    """Apply a compiled xone choice (`h`, the context's hint): satisfy the kept member by its plan, break the others
    by their rules, unchecked."""
    name = "xone.satisfy_one"
    i = h.get("branch")
    if not isinstance(i, int) or not 0 <= i < len(members) or not isinstance(h.get("plan"), dict):
        return []
    p = run_steps(name, ctx, v.value, [members[i]], h["plan"], v.focus)
    if p is None:
        return []
    work = applied(ctx.graph, p)
    for j, kind in h.get("breaks", []):
        if not isinstance(j, int) or not 0 <= j < len(members):
            return []
        br = [b for b, _ in _break_candidates(ctx.deeper(work), v.value, members[j], v) if b.choice == kind]
        if not br:
            return []
        work, p = applied(work, br[0]), merge(name, p, br[0])
    return [Patch(name, p.added, p.removed, p.touches | {v.focus}, h)] if p.size else []


@strategy("not.break", SH.NotConstraintComponent,
          bindings={"shape": "shape sh:not"}, checks=True)
def not_break(ctx: Context, v: Violation) -> list[Patch]:
    """sh:not: change the value so it no longer conforms to the negated shape (a compiled rule: no trial check)."""
    shape = ctx.param(v.shape, "not")
    if isinstance(ctx.hint, str):
        return [p for p, _ in _break_candidates(ctx, v.value, shape, v) if p.choice == ctx.hint]
    return _break(ctx, v.value, shape, v)


def _break(ctx: Context, node, shape, v: Violation) -> list[Patch]:
    """Patches after which `node` (or the value replacing it) no longer conforms to `shape`, each checked."""
    out = []
    for p, check in _break_candidates(ctx, node, shape, v):
        if check is None or not ctx.conforms(check, shape, applied(ctx.graph, p)):
            out.append(p)
    return out


def _break_candidates(ctx: Context, node, shape, v: Violation) -> list[tuple]:
    """(patch, node to re-check or None): drop a type, drop needed values, retype a literal, drop the value. Dropping
    every type that makes the node an instance of the shape's sh:class, or every value of a path whose property shape
    asks for one (sh:minCount >= 1, sh:hasValue), breaks the shape by the rule itself: no re-check."""
    name, f, g = "not.break", v.focus, ctx.graph
    out: list[tuple[Patch, Literal | None]] = []
    cls = ctx.param(shape, "class")
    if cls is not None:
        types = {(node, RDF.type, t) for t in g.objects(node, RDF.type)
                 if cls in set(g.transitive_objects(t, RDFS.subClassOf))}
        out.append((Patch(name, frozenset(), frozenset(types), frozenset({node}), "drop-type"), None))
    for ps in ctx.params(shape, "property"):
        path = ctx.param(ps, "path")
        if isinstance(path, URIRef) and (ctx.param(ps, "minCount") or ctx.param(ps, "hasValue")) is not None:
            drop = frozenset(g.triples((node, path, None)))
            out.append((Patch(name, frozenset(), drop, frozenset({node}), f"drop-values:{path}"), None))
    if isinstance(node, Literal) and ctx.param(shape, "datatype") is not None:
        new = Literal(str(node)) if ctx.param(shape, "datatype") != XSD.string else Literal(str(node), lang="und")
        out += [(p, new) for p in replace_value(name, ctx, v, new, "retype")]
    if node != f:
        out += [(p, None) for p in drop_value(name, ctx, v, node, "drop")]
    return [(p, c) for p, c in out if p.size]
