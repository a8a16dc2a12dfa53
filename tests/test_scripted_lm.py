"""`--lm scripted`: train and ablate run end to end from a clone with no model, and the loop does all of its work."""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm must not fetch its price list (no network)

import json  # noqa: E402
from pathlib import Path  # noqa: E402

from click.testing import CliRunner  # noqa: E402

from owl_memory import Memory  # noqa: E402
from owl_memory.ablation.records import read_records  # noqa: E402
from owl_memory.cli import main  # noqa: E402
from owl_memory.provenance import FAILED_RUN_ITEMS  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TRACE = """PREFIX prov: <http://www.w3.org/ns/prov#>
SELECT ?item ?run ?trajectory WHERE { ?item a ?kind ; prov:wasGeneratedBy ?run ; prov:wasDerivedFrom ?trajectory }"""


def test_train_with_the_scripted_lm_runs_the_whole_loop(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    memory = tmp_path / "m"
    res = CliRunner().invoke(main, ["train", str(ROOT / "experiments" / "curricula" / "library.yaml"), "--lm",
                                    "scripted", "--limit", "3", "--memory", str(memory), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["ran"] == 3 and out["errors"] == 0 and out["succeeded"] == 0  # it answers nothing: judged wrong
    assert all(t["judgment"]["judge"] in ("answer", "sparql") and t["extracted"] for t in out["tasks"])
    assert out["consolidation"]["added"] >= 1 and out["consolidation"]["duplicates"] >= 1  # repeated failure merges
    extracted = {i for t in out["tasks"] for i in t["extracted"]}
    with Memory(memory) as m:
        assert {m.get(i).kind for i in extracted} == {"AntiPattern"}
        traced = {row[0].rsplit("/", 1)[-1] for row in m.sparql(TRACE).rows}
        assert extracted <= traced  # every extracted item names the run and trajectory it came from
        assert m.sparql(FAILED_RUN_ITEMS).rows  # later runs found earlier items: usage is recorded


def test_ablate_with_the_scripted_lm(tmp_path):
    out = tmp_path / "ablation"
    res = CliRunner().invoke(main, ["ablate", str(ROOT / "tests" / "data" / "ablation" / "mini.yaml"), "--conditions",
                                    "A0,A2", "--lm", "scripted", "--out", str(out), "--serial", "--json"])
    assert res.exit_code == 0, res.output
    recs = read_records(out / "results.jsonl")
    assert len(recs) == 2 * (3 * 2 + 2) and all(r.error is None and not r.success for r in recs)
    a2 = [r for r in recs if r.condition == "A2"]
    assert sum(r.tool_calls for r in recs if r.condition == "A0") == 0 and all(r.tool_calls > 0 for r in a2)
    assert any(r.memory_ids_used for r in a2 if r.phase == "holdout" and r.checkpoint == 2)  # what training stored
    assert json.loads(res.stdout)["lm"] == "scripted" and (out / "report.html").exists()
