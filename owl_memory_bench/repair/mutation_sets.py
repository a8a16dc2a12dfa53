"""Mutation sets: instance data built from a shapes file, broken by the edits of the mutation catalogue."""

from __future__ import annotations

from pathlib import Path

from rdflib import Graph

from owl_memory.errors import InstanceError, LoadError
from owl_memory.rdfio import load_graph
from owl_memory.repair.cost import change_cost
from owl_memory.repair.verification import broken_sparql_targets, verify
from owl_memory.vocab import RDF, SH

from .cases import Case, closure, without
from .instances import build_instances, canonical
from .mutations import combined, mutations
from .standards import brick_shapes

SHAPE_PREDICATES = (SH.targetClass, SH.targetNode, SH.targetSubjectsOf, SH.targetObjectsOf, SH.target, SH.property,
                    SH.path)  # a file using none of these (and typing no sh:NodeShape / sh:PropertyShape) has no shapes
REALWORLD = {"dcat": "ontologies/dcat-ap-SHACL.ttl", "datacube": "ontologies/datacube.shapes.ttl",
             "fabric": "ontologies/core-shapes.ttl"}  # in the data folder; fabric: Knowledge Fabric core shapes
EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"
SHIPPED = {"sprint": EXPERIMENTS / "sprint1" / "shapes.ttl",  # mutation sets from shapes in the repo (no data folder)
           **{f"construction:{n}": EXPERIMENTS / "construction" / f"{n}.shapes.ttl"
              for n in ("library", "clinic", "fleet", "museum")}}
PER_KIND = 6  # mutation cases per edit kind and set (evenly spread over every edit that applies)
EDITS = 3  # independent edits per graph in a ":multi" set
SEED = 11  # the draw of a ":multi" set's edits


def shapes_file(base: str, data: Path | None) -> tuple[str, Path | Graph] | None:
    """The name and shapes file of a mutation set: "shapes:PATH" itself, or what a named set stands for (dcat,
    datacube, fabric in the data folder; sprint, construction:<name> in the repo; brick: the shapes graph the
    brickschema package ships, repair.standards); None for any other set."""
    if base == "brick":
        return base, brick_shapes()
    if base.startswith("shapes:"):
        path = Path(base.removeprefix("shapes:")).expanduser()
        return f"shapes:{path.name}", path
    if base in SHIPPED:
        return base, SHIPPED[base]
    return (base, data / REALWORLD[base]) if base in REALWORLD else None


def load_shapes(path: Path) -> Graph:
    """The shapes in `path`, their blank nodes labelled canonically (the same cases for every parse of the file);
    SystemExit naming the file when it is absent, does not parse, or holds no SHACL shapes."""
    if not path.is_file():
        raise SystemExit(f"shapes file {path} not found: give an existing SHACL shapes file (shapes:PATH)")
    try:
        g = load_graph(path)
    except LoadError as e:
        raise SystemExit(f"shapes file {path}: {e}") from e
    if not any((None, p, None) in g for p in SHAPE_PREDICATES) and not {SH.NodeShape, SH.PropertyShape} & set(
            g.objects(None, RDF.type)):
        raise SystemExit(f"{path} holds no SHACL shapes (no sh:NodeShape, sh:PropertyShape, target, sh:property or "
                         "sh:path): give a shapes file, not a data file")
    return canonical(g)


def mutation_cases(name: str, path: Path | Graph, per_kind: int, multi: bool = False) -> list[Case]:
    """Instance data built from a shapes file (or a shapes graph read from a package: repair.standards), broken by up
    to `per_kind` edits of each kind that do violate; with `multi`, 2 x `per_kind` graphs broken by EDITS independent
    edits each (every edit violating on its own)."""
    shapes, dropped = runnable(load_shapes(path) if isinstance(path, Path) else canonical(path))
    try:
        base = build_instances(shapes).graph
    except InstanceError as e:
        raise SystemExit(f"shapes file {path}: {e}") from e
    found = mutations(base, shapes)
    breaks = lambda m: not verify(m.apply(base), shapes).conforms  # noqa: E731
    grouped: dict = {}
    for m in found:
        grouped.setdefault(m.kind, []).append(m)
    cases = [_mutation_case(f"{name}:multi", m, base, shapes, dropped)
             for m in combined(found, EDITS, 2 * per_kind, SEED, breaks)] if multi else []
    for _, same in [] if multi else sorted(grouped.items()):
        step = max(1, len(same) // per_kind)
        cases += [_mutation_case(name, m, base, shapes, dropped)
                  for m in [m for m in same[::step] if breaks(m)][:per_kind]]
    if not cases:
        raise SystemExit(f"shapes file {path}: no edit of the mutation catalogue breaks the data built from it (edits "
                         "need a property shape with a predicate path at a targeted node; a :multi set needs "
                         f"{EDITS} independent ones)")
    return cases


def runnable(shapes: Graph) -> tuple[Graph, tuple[str, ...]]:
    """`shapes` without the node shapes whose SHACL-SPARQL target pySHACL cannot run (a sh:select that does not parse
    or selects no ?this: validation fails once it matches a node), and one line per shape left out. Done in memory:
    the file is the user's, and repairing it is not this benchmark's job."""
    faults = dict(broken_sparql_targets(shapes))
    owners = {s: faults[t] for s, t in shapes.subject_objects(SH.target) if t in faults}
    if not owners:
        return shapes, ()
    kept = without(shapes, closure(shapes, set(owners)))
    return kept, tuple(f"{s.n3(shapes.namespace_manager)} (its SPARQL target {why.split(';')[0]})"
                       for s, why in sorted(owners.items()))


def _mutation_case(name: str, m, base: Graph, shapes: Graph, dropped: tuple[str, ...]) -> Case:
    """A case: `base` broken by mutation `m`; its inverse edit is the witness repair."""
    broken = m.apply(base)
    return Case(f"{name}/{m.name}", broken, shapes, kind=m.kind, witness=len(m.added) + len(m.removed),
                witness_cost=change_cost(broken, m.removed, m.added), shapes_left_out=dropped)
