"""Construction ablation over real shapes: A0 (empty memory) vs A2 (compiled operators) on unseen holdout shapes.

Train: repair cases built on the DCAT-AP shapes; holdout: cases built on the Knowledge Fabric core shapes (other
IRIs, classes and shapes). Each case's data is generated from its shapes file (no data ships with them): for the
first N node shapes with a sh:targetClass, two instances whose property values break the shape's value constraints
(a plain literal where sh:class / an IRI node kind is required, a non-value for sh:datatype; required properties
left out for sh:minCount). The curriculum is written beside that data and run by the ablation harness. The Fabric
shapes' one sh:SPARQLTarget selects ?resource, not ?this: it is dropped from the copy the cases use.
Run: python benchmarks/construction.py [--data DIR] [--shapes N] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import warnings
from pathlib import Path

from rdflib import Graph, Literal, URIRef

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from owl_memory.ablation.harness import ablate  # noqa: E402
from owl_memory.datadir import data_dir  # noqa: E402
from owl_memory.vocab import RDF, SH, XSD  # noqa: E402

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


def main(argv=None) -> int:
    """Run A0 and A2 over the generated curriculum and print holdout costs with A2/A0 ratios."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=None, help="shared data folder (default: OWL_MEMORY_DATA)")
    ap.add_argument("--shapes", type=int, default=6, help="node shapes per case (default 6)")
    ap.add_argument("--out", type=Path, default=None, help="run folder (default: a temporary one)")
    a = ap.parse_args(argv)
    logging.disable(logging.WARNING)
    warnings.filterwarnings("ignore")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    out = a.out or Path(tempfile.mkdtemp(prefix="construction-bench-"))
    out.mkdir(parents=True, exist_ok=True)
    s = ablate(curriculum(a.data or data_dir(), out, a.shapes), "A0,A2", out=out / "run", holdout_every=len(TRAIN),
               parallel=False)
    last = {c: s["conditions"][c]["holdout"][-1] for c in ("A0", "A2")}
    print(f"holdout {', '.join(HOLDOUT)} after training on {', '.join(TRAIN)} ({a.shapes} node shapes per case)")
    for key in ("iterations", "validations", "mean"):
        a0, a2 = last["A0"][key], last["A2"][key]
        ratio = f"{a2 / a0:.2f}" if a0 else "-"
        print(f"  {key:<12} A0 {a0:<6} A2 {a2:<6} A2/A0 {ratio}")
    print(f"records: {out / 'run' / 'results.jsonl'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
