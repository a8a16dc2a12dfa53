"""Construction ablation material over real shapes: repair cases generated from shapes files (no data ships with
them) and the curriculum that runs them, DCAT-AP to train, Knowledge Fabric core shapes held out."""

from __future__ import annotations

import json
from pathlib import Path

from rdflib import Graph, Literal, URIRef

from owl_memory.vocab import RDF, SH, XSD

TRAIN = ("dcat-ap-SHACL.ttl",)
HOLDOUT = ("core-shapes.ttl",)
IRI_KINDS = {SH.IRI, SH.BlankNodeOrIRI, SH.IRIOrLiteral}


def broken_value(shapes: Graph, ps):
    """A value breaking a property shape's value constraints, or None when it constrains no value kind."""
    if shapes.value(ps, SH["class"]) is not None or shapes.value(ps, SH.nodeKind) in IRI_KINDS:
        return Literal("a literal name")
    dt = shapes.value(ps, SH.datatype)
    if dt is not None and dt != XSD.string:
        return Literal("not a value")
    return None


def broken_data(shapes: Graph, n_shapes: int, tag: str) -> Graph:
    """Data for the first `n_shapes` class-targeting node shapes: two instances each, every value constraint broken."""
    g = Graph()
    targets = sorted((s, c) for s, c in shapes.subject_objects(SH.targetClass) if isinstance(c, URIRef))
    for i, (shape, cls) in enumerate(targets[:n_shapes]):
        for j in range(2):
            node = URIRef(f"urn:bench:{tag}:{i}:{j}")
            g.add((node, RDF.type, cls))
            for ps in sorted(shapes.objects(shape, SH.property)):
                path, value = shapes.value(ps, SH.path), broken_value(shapes, ps)
                if isinstance(path, URIRef) and value is not None:
                    g.add((node, path, value))
    return g


def usable(shapes: Graph) -> Graph:
    """The shapes without SPARQL targets that select no ?this (SHACL-AF requires it; pySHACL fails on them)."""
    for s, t in list(shapes.subject_objects(SH.target)):
        if "?this" not in str(shapes.value(t, SH.select) or "?this"):
            shapes.remove((s, SH.target, t))
    return shapes


def curriculum(data: Path, out: Path, n_shapes: int) -> Path:
    """Write the generated cases and their curriculum YAML into `out`; returns the YAML path."""
    tasks = []
    for split, names in (("train", TRAIN), ("holdout", HOLDOUT)):
        for name in names:
            tag = name.split(".")[0]
            shapes = usable(Graph().parse(data / "ontologies" / name))
            shapes.serialize(out / f"{tag}.shapes.ttl", format="turtle")
            broken_data(shapes, n_shapes, tag).serialize(out / f"{tag}.data.ttl", format="turtle")
            tasks.append({"id": tag, "repair": {"data": f"{tag}.data.ttl", "shapes": f"{tag}.shapes.ttl"},
                          "split": split})
    path = out / "curriculum.yaml"
    path.write_text(json.dumps({"id": "construction_shared", "kind": "construction", "tasks": tasks}, indent=1))
    return path
