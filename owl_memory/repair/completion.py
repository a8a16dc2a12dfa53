"""Type with completion: a patch that types a node, creates one or links one where a shape targets the objects (or
subjects) of a predicate also gives that node what the shapes now targeting it require: required types, required
values (sh:hasValue, sh:minCount, with their own sh:class and sh:node), recursively for the nodes it creates, to a
bounded depth. Read off the shapes with no check: the round's verification judges the whole patch, and the patch's
cost counts these consequences, so a retype that drags in new nodes ranks behind dropping one link.
"""

from __future__ import annotations

from dataclasses import replace

from rdflib import Graph, Literal

from ..vocab import RDF, SH
from .conformance import is_instance
from .context import Context
from .guards import targeting
from .patch import Patch, applied
from .paths import link_triples, parse, values
from .synth import synthesize

MAX_DEPTH = 3  # rounds of completing the nodes the previous round created
MAX_TRIPLES = 60  # a completion that would grow past this many triples stops there (the verify round judges it)


def completed(ctx: Context, p: Patch) -> Patch:
    """`p` plus what newly targeting shapes require of the nodes it types, creates or links (`p` itself when it
    makes no node a new target)."""
    if not _may_target(ctx.shapes, p):
        return p
    work = applied(ctx.graph, p)
    todo = _entered(ctx.graph, work, ctx.shapes, _nodes(p.added))
    extra: set = set()
    for _ in range(MAX_DEPTH):
        if not todo or len(extra) > MAX_TRIPLES:
            break
        before = _copy(work)
        found, more = set(), []
        for node, shape in todo:
            got, nested = _required(replace(ctx.bare(work, ctx.depth), keep_values=ctx.keep_values), node, shape)
            found |= got - set(work)
            more += nested
        for t in found:
            work.add(t)
        extra |= found
        todo = _entered(before, work, ctx.shapes, _nodes(found)) + more
    extra -= set(ctx.graph)
    return Patch(p.operator, p.added | extra, p.removed, p.touches, p.choice) if extra else p


def _may_target(shapes: Graph, p: Patch) -> bool:
    """True when a patch adds a type or a triple on a predicate some shape targets the subjects or objects of."""
    watched = set(shapes.objects(None, SH.targetSubjectsOf)) | set(shapes.objects(None, SH.targetObjectsOf))
    return any(t[1] == RDF.type or t[1] in watched for t in p.added)


def _nodes(triples) -> set:
    """The non-literal nodes of some triples."""
    return {n for t in triples for n in (t[0], t[2]) if not isinstance(n, Literal)}


def _entered(before: Graph, after: Graph, shapes: Graph, nodes) -> list:
    """(node, shape) for every shape that targets a node in `after` and did not in `before`, sorted."""
    return sorted((n, s) for n in nodes for s in targeting(after, shapes, n) - targeting(before, shapes, n))


def _required(ctx: Context, node, shape) -> tuple[set, list]:
    """Triples giving `node` what `shape` requires (its sh:class, sh:hasValue and sh:minCount values, its members'
    requirements through sh:node / sh:and), and (value, shape) pairs its new values must meet next."""
    out, nested = {(node, RDF.type, c) for c in ctx.params(shape, "class") if not is_instance(ctx.graph, node, c)}, []
    nested += [(node, m) for m in [*ctx.params(shape, "node"), *ctx.listed(shape, "and")]]
    own = [shape] if ctx.param(shape, "path") is not None else []
    for ps in [*own, *ctx.params(shape, "property")]:
        path = ctx.param(ps, "path")
        if isinstance(node, Literal) or parse(ctx.shapes, path) is None:
            continue
        have = set(values(ctx, node, path))
        for want in ctx.params(ps, "hasValue"):
            out |= (link_triples(ctx, node, path, want) or set()) if want not in have else set()
            have.add(want)
        for i in range(int(ctx.param(ps, "minCount") or 0) - len(have)):
            got = synthesize(ctx, ps, node, i, frozenset(have))
            links = link_triples(ctx, node, path, got[0]) if got else None
            if not got or links is None:
                break
            out |= links | got[1]
            have.add(got[0])
            nested += [(got[0], n) for n in ctx.params(ps, "node")]
    return out, nested


def _copy(g: Graph) -> Graph:
    """A plain copy of a graph."""
    out = Graph()
    out += g
    return out
