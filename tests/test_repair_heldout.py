"""The held-out set: 80 hand-written repair cases on real vocabularies (PROV-O, SKOS, schema.org, DCAT, FOAF, ORG,
vCard, OWL-Time, GeoSPARQL serialisations with sh:pattern and sh:flags), in tests/data/heldout, one file each with
its data and shapes. The repairer was never tuned on them: they were written, given the oracle's verdicts, repaired
once, and the figures pinned here. tests/data/heldout_verdicts.json holds the verdicts of the oracle, independent of
the repairer: `oracle(g, g, max_size=3, budget=2000, cost=True)` for each file (change sets up to 3 triples, 2000
pySHACL runs a case, the least cost searched). The same figures from the benchmark:
python benchmarks/repair.py --suites cases:tests/data/heldout --oracle-size 3 --oracle-budget 2000 --train ''
"""

import json
from pathlib import Path

import pytest

from owl_memory_bench.repair.oracle import oracle
from owl_memory_bench.repair.scoring import run_all
from owl_memory_bench.repair.suites import folder_cases

FOLDER = Path(__file__).parent / "data" / "heldout"
VERDICTS = json.loads((Path(__file__).parent / "data" / "heldout_verdicts.json").read_text(encoding="utf-8"))
CASES, REPAIRABLE, NONE, UNKNOWN = 80, 77, 1, 2  # the oracle's verdicts on the set
REPAIRED, MINIMAL = 77, 77  # measured once, on the first run over the set (issue 26's target: >= 90% and >= 95%)


def test_every_case_is_a_pinned_verdict():
    """Each file of the folder has the oracle's verdict, and each verdict a file; every case violates as written."""
    assert sorted(p.stem for p in FOLDER.glob("*.ttl")) == sorted(VERDICTS) and len(VERDICTS) == CASES
    statuses = [v["status"] for v in VERDICTS.values()]
    assert (statuses.count("repairable"), statuses.count("none"), statuses.count("unknown")) == (REPAIRABLE, NONE,
                                                                                                 UNKNOWN)


@pytest.fixture(scope="module")
def cases() -> dict:
    """The folder's cases by name, parsed once for the module."""
    return {c.name: c for c in folder_cases(FOLDER)}


@pytest.mark.parametrize("name", sorted(n for n, v in VERDICTS.items() if v["validations"] <= 12))
def test_a_cheap_pinned_verdict_reproduces(name, cases):
    """The oracle gives the pinned verdict again (the cheap ones; the rest take minutes)."""
    case = cases[f"heldout/{name}"]
    assert oracle(case.data, case.shapes, max_size=3, budget=2000, cost=True).to_dict() == VERDICTS[name]


def test_the_held_out_rate(memory):
    """Repaired in one memory as the benchmark repairs a suite: every oracle-repairable case, each at the oracle's
    least cost, the three beyond the oracle's bound too; no target lost, no value copied from another node."""
    verdicts = {f"heldout/{k}": v for k, v in VERDICTS.items()}
    s = run_all(folder_cases(FOLDER), memory, verdicts)["summary"]
    assert (s["cases"], s["oracle_repairable"]) == (CASES, REPAIRABLE)
    assert s["repaired_of_oracle"] >= REPAIRED and s["repaired_share"] >= 0.9
    assert s["minimal"] >= MINIMAL and s["minimal_share"] >= 0.95
    assert s["target_deletions"] == 0 and s["copied_values"] == 0
    assert s["repaired_beyond_oracle"] == CASES - REPAIRABLE
