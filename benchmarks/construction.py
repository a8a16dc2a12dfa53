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
import logging
import os
import tempfile
import warnings
from pathlib import Path

from owl_memory.ablation.harness import ablate
from owl_memory.datadir import data_dir
from owl_memory_bench.construction_cases import HOLDOUT, TRAIN, curriculum


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
    last = {c: s.conditions[c].holdout[-1] for c in ("A0", "A2")}
    print(f"holdout {', '.join(HOLDOUT)} after training on {', '.join(TRAIN)} ({a.shapes} node shapes per case)")
    for key in ("iterations", "validations", "mean"):
        a0, a2 = getattr(last["A0"], key), getattr(last["A2"], key)
        ratio = f"{a2 / a0:.2f}" if a0 else "-"
        print(f"  {key:<12} A0 {a0:<6} A2 {a2:<6} A2/A0 {ratio}")
    print(f"records: {out / 'run' / 'results.jsonl'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
