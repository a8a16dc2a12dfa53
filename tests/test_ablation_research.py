"""The ablation as a research instrument: pass@k, the success criteria, append-only and bounded memories (E9–E11),
progress with ETA, the paper-ready report (SVG files, CSV and LaTeX tables, integer ticks, no empty panels) and the
dry run's cost estimate."""

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from owl_memory import ItemSpec, Memory
from owl_memory.ablation.configs import load_experiment
from owl_memory.ablation.cost import estimate
from owl_memory.ablation.harness import ablate
from owl_memory.ablation.progress import status_line
from owl_memory.ablation.records import Record
from owl_memory.ablation.summary import pass_at_k, summarize
from owl_memory.cli import main

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ROOT / "experiments" / "curricula" / "library.ttl"
ONTO = "http://w3id.org/owl-memory/examples/library"


def holdout(condition, task, rep, success, cp=0, **kw):
    """A holdout record."""
    return Record(condition, rep, "holdout", cp, cp, task, "holdout", success, "answer", **kw)


def test_pass_at_k_is_the_unbiased_estimate_over_the_last_checkpoint():
    records = [holdout("A2", "h0", 0, True), holdout("A2", "h0", 1, False), holdout("A2", "h1", 0, False),
               holdout("A2", "h1", 1, False), holdout("A2", "h1", 2, True, cp=0), holdout("A2", "h0", 0, False, cp=-1)]
    got = pass_at_k(records)
    assert got["1"] == pytest.approx((1 / 2 + 1 / 3) / 2, abs=1e-4)
    assert got["2"] == pytest.approx((1 + 2 / 3) / 2, abs=1e-4)  # h1: 1 - C(2,2)/C(3,2)
    assert got["3"] == 1.0  # only h1 ran three times, and one of them succeeded
    assert summarize(records).conditions["A2"].pass_at_k == got


def arm(name, success, large=0, converged=True):
    """Two holdout records of a named arm with the given outcome, large returns and convergence."""
    return [holdout(name, f"h{t}", 0, t < success, large_returns=large, converged=converged) for t in range(2)]


@pytest.mark.parametrize("arms,expected,detail", [
    ({"E2": 1, "E3": 0, "E4": 1, "E5": 0, "E6": 2}, "met", "E6 1 vs max 0.5 (E2)"),
    ({"E2": 2, "E3": 0, "E4": 1, "E5": 0, "E6": 1}, "not met", "E6 0.5 vs max 1 (E2)"),
    ({"E2": 2, "E6": 1}, "not measurable", "needs arms E3, E4, E5"),
    ({"E2": 0, "E3": 0, "E4": 0, "E5": 0, "E6": 0}, "not measurable", "every arm scored 0; E6 0 vs max 0"),
])
def test_the_layer_cake_criterion_is_the_only_one_its_arms_define(arms, expected, detail):
    records = [r for name, ok in arms.items() for r in arm(name, ok)]
    (criterion,) = summarize(records).criteria  # no E7 or E8 arm ran: their criteria are not printed
    assert criterion.status == expected and detail in criterion.detail, criterion


def test_an_ablation_without_experiment_arms_has_no_criteria():
    assert summarize(arm("A0", 1) + arm("A2", 2)).criteria == ()


def test_large_returns_and_auto_inject_criteria_with_their_numbers():
    records = arm("E7a", 0, large=5) + arm("E7b", 0, large=2) + arm("E8a", 0, converged=True) + \
        [holdout("E8b", "h0", 0, False, converged=True), holdout("E8b", "h1", 0, False, converged=False)]
    large, auto = summarize(records).criteria
    assert (large.status, auto.status) == ("met", "met")
    assert "E7b 4 vs E7a 10 (40%)" in large.detail and "E8a 100% vs E8b 50%" in auto.detail
    records = arm("E7a", 0, large=0) + arm("E7b", 0, large=3) + arm("E8a", 0, converged=False) + arm("E8b", 0)
    large, auto = summarize(records).criteria
    assert large.status == "not measurable" and auto.status == "not met"


def tiny(folder: Path, train: int = 1) -> Path:
    """A curriculum of `train` hierarchy train tasks and one holdout task over the library ontology."""
    tasks = [{"id": f"t{n}", "query": "Name one direct subclass of lib:Work.", "task_type": "hierarchy",
              "expect": {"answer": "Book"}, "split": "train"} for n in range(train)]
    tasks.append({"id": "h1", "query": "Name the superclass of lib:Book.", "task_type": "hierarchy",
                  "expect": {"answer": "Work"}, "split": "holdout"})
    path = folder / "c.yaml"
    path.write_text(yaml.safe_dump({"id": "tiny", "ontology": {"name": "library", "path": str(LIBRARY)},
                                    "tasks": tasks}))
    return path


def test_append_only_consolidation_and_the_forgetting_bound_e9_to_e11(tmp_path):
    """The start memory holds a near-twin of what a failed hierarchy task extracts: consolidation (E10) merges the
    new item away, append-only (E9) keeps both, a bound of one (E11) keeps one active item."""
    tiny(tmp_path)
    with Memory(tmp_path / "start") as m:
        m.add(ItemSpec("AntiPattern", "Avoid no answer terms on hierarchy questions",
                       "Use before answering hierarchy questions with one query over the ontology tools: this failed "
                       "before (no-answer-terms).", "An older note on the same failure.", applies_to=(ONTO,),
                       task_types=("hierarchy",), failure_modes=("no-answer-terms",)))
    (tmp_path / "e.yaml").write_text(yaml.safe_dump({"curriculum": "c.yaml", "configs": {
        "E9": {"condition": "A1", "consolidate": False}, "E10": {"condition": "A1"},
        "E11": {"condition": "A1", "max_items": 1}}}))
    summary = ablate(tmp_path / "e.yaml", "E9,E10,E11", out=tmp_path / "out", lm="scripted",
                     memory=tmp_path / "start", parallel=False)
    c = summary.conditions
    assert (c["E9"].active_items_end, c["E10"].active_items_end, c["E11"].active_items_end) == (2, 1, 1)
    assert c["E9"].memory_growth.items_end == c["E10"].memory_growth.items_end == 2  # E10's twin is stored, archived
    arms = {a["name"]: a for a in summary.settings["arms"]}
    assert (arms["E9"]["consolidate"], arms["E10"]["consolidate"], arms["E11"]["max_items"]) == (False, True, 1)


def test_the_command_line_switches_reach_arms_that_do_not_set_their_own(tmp_path):
    tiny(tmp_path)
    (tmp_path / "e.yaml").write_text(yaml.safe_dump({"curriculum": "c.yaml", "configs": {
        "own": {"condition": "A1", "consolidate": True, "k": 1, "budgets": {"L2": 500}},
        "cli": {"condition": "A1"}}}))
    summary = ablate(tmp_path / "e.yaml", "own,cli", out=tmp_path / "out", lm="scripted", parallel=False,
                     consolidate=False, max_items=5, k="1,1,0", budgets="L2=700,L0=300")
    arms = {a["name"]: a for a in summary.settings["arms"]}
    assert (arms["own"]["consolidate"], arms["own"]["k"], arms["own"]["budgets"]) == (True, 1, {"L2": 500, "L0": 300})
    assert (arms["cli"]["consolidate"], arms["cli"]["k"], arms["cli"]["max_items"]) == (False, "1+1+0", 5)
    starts = [json.loads(p.read_text().splitlines()[0]) for p in sorted((tmp_path / "out" / "runs").rglob("*.jsonl"))]
    assert {s["config"]["k"] for s in starts} == {1, "1+1+0"}


def test_shipped_closed_loop_and_baseline_configs():
    loop = load_experiment(ROOT / "experiments" / "ablation" / "closed_loop.yaml").configs
    assert list(loop) == ["E9", "E10", "E11"]
    assert (loop["E9"].consolidate, loop["E10"].consolidate, loop["E11"].max_items) == (False, None, 8)
    base = load_experiment(ROOT / "experiments" / "ablation" / "baselines.yaml").configs
    assert {c.condition for c in base.values()} == {"A0", "A1", "A2", "A5"}
    assert base["A1k1"].k.overall == 1 and base["A1"].k is None


def test_progress_shows_each_task_with_an_eta(tmp_path, capsys):
    tiny(tmp_path, train=2)
    ablate(tmp_path / "c.yaml", "A0", out=tmp_path / "out", lm="scripted", parallel=False, progress=True)
    err = capsys.readouterr().err
    assert "[5/5] 100%" in err and "last: A0-r0 holdout h1" in err
    assert status_line(3, 12, 2, 60.0, {}) == "[3/12] 25% · 1m00s elapsed · ETA 4m30s"


def test_the_report_writes_svg_files_csv_and_latex_tables_without_empty_panels(tmp_path):
    tiny(tmp_path, train=3)
    summary = ablate(tmp_path / "c.yaml", "A0,A2", out=tmp_path / "out", lm="scripted", parallel=False, repeats=2)
    out = tmp_path / "out"
    page = (out / "report.html").read_text()
    figures = sorted(p.stem for p in (out / "figures").glob("*.svg"))
    assert "holdout-success" in figures and "pass-at-k" in figures
    assert "tokens-per-task" not in figures and "payload-chars" not in figures  # the scripted LM reports no tokens
    assert "No panel for metrics no condition has: Tokens per task" in page
    for name in figures:
        svg = ET.parse(out / "figures" / f"{name}.svg").getroot()  # a standalone, well-formed SVG file
        assert svg.tag.endswith("svg") and f'id="{name}"' in page
    ticks = re.findall(r'text-anchor="middle">([^<]+)</text>', (out / "figures" / "holdout-success.svg").read_text())
    assert ticks and all(t.isdigit() for t in ticks if t not in ("train tasks seen", "holdout success"))
    rows = list(csv.DictReader(io.StringIO((out / "tables" / "conditions.csv").read_text())))
    assert [r["condition"] for r in rows] == ["A0", "A2"]
    assert re.fullmatch(r"\d+% \[\d+–\d+%\]", rows[0]["final holdout"])
    tex = (out / "tables" / "checkpoints.tex").read_text()
    assert "\\begin{tabular}" in tex and "\\%" in tex and "\\toprule" in tex
    assert summary.conditions["A2"].pass_at_k.keys() == {"1", "2"}


def test_the_dry_run_estimates_what_a_model_would_cost(tmp_path):
    tiny(tmp_path)
    res = CliRunner().invoke(main, ["ablate", str(tmp_path / "c.yaml"), "--conditions", "A0,A1", "--lm", "scripted",
                                    "--out", str(tmp_path / "out"), "--serial", "--max-iters", "6",
                                    "--estimate-cost", "openai/gpt-4o-mini", "--max-tokens", "500"])
    assert res.exit_code == 0, res.output
    assert "estimate for openai/gpt-4o-mini: 6 runs" in res.output and "(3 iterations)" in res.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    from owl_memory.ablation.summary import Summary

    e = estimate(Summary.from_dict(summary), "openai/gpt-4o-mini", 500)
    assert e.priced and e.worst_tokens[1] == 7 * 500 and 0 < e.typical_usd < e.worst_usd
    assert e.first_prompt_tokens > 300  # the instructions, the task and the ontology's handle, in tokens
    unpriced = estimate(Summary.from_dict(summary), "openai/my-local-model")
    assert not unpriced.priced and unpriced.typical_usd is None and "not priced" in unpriced.lines()[1]
