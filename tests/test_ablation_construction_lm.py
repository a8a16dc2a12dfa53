"""Construction ablations with a model: the construction curriculum under A0-A4 with an LM (the scripted stand-in),
records carrying verify runs, deltas, undos, LM calls, tokens and leakage next to success."""

import json
from pathlib import Path

import pytest

from owl_memory.ablation.harness import ablate
from owl_memory.ablation.records import read_records
from owl_memory.ablation.summary import ConditionSummary
from owl_memory.errors import ConfigError

CURRICULUM = Path(__file__).resolve().parents[1] / "experiments" / "construction" / "curriculum.yaml"
SUMMARY_KEYS = {"holdout", "runs", "errors", "train_success", "tokens_per_task", "iterations_per_task",
                "holdout_validations_per_task", "holdout_compiled_reused_per_task", "leakage", "memory_growth"}


@pytest.mark.slow
def test_a_model_runs_the_construction_curriculum_under_every_condition(tmp_path):
    out = tmp_path / "run"
    summary = ablate(CURRICULUM, "A0,A2,A4", out=out, holdout_every=3, lm="scripted", parallel=False)
    records = read_records(out / "results.jsonl")
    assert {r.condition for r in records} == {"A0", "A2", "A4"} and len(records) == 3 * 7
    repairs = [r for r in records if r.task_id.endswith("-repair")]
    assert all(r.success and r.verify_runs > 0 and r.deltas > 0 and r.lm_calls == 1 for r in repairs)
    sprint = [r for r in records if r.task_id == "sprint1"]
    assert all(not r.success and r.judge == "cq+shacl" for r in sprint)  # the stand-in writes no triples
    a2 = [r for r in records if r.condition == "A2" and r.phase == "holdout" and r.checkpoint == 1]
    assert all(r.compiled_reused > 0 for r in a2)  # compiled operators from memory, through repair_candidates
    assert all(r.compiled_reused == 0 for r in records if r.condition == "A0")
    data = json.loads((out / "summary.json").read_text())
    for name, c in data["conditions"].items():
        assert SUMMARY_KEYS <= set(c) and c["verify_runs_per_task"] > 0 and c["deltas_per_task"] > 0, name
    assert summary.conditions["A2"].holdout_verify_runs_per_task > 0 and data["lm"] == "scripted"
    assert ConditionSummary.from_dict(data["conditions"]["A0"]) == summary.conditions["A0"]
    assert "Construction agent" in (out / "report.html").read_text()
    trajectories = list((out / "runs").rglob("*.jsonl"))
    assert len(trajectories) == len(records) and all((t.parent / "summary.json").is_file() for t in trajectories)


def test_conditions_beyond_a2_need_a_model():
    with pytest.raises(ConfigError, match="A0, A2"):
        ablate(CURRICULUM, "A0,A3", out="unused", parallel=False)


def test_an_old_summary_without_the_agent_metrics_still_loads():
    old = {"holdout": [], "runs": 1, "errors": 0, "train_success": 1.0, "tokens_per_task": 0.0,
           "prompt_tokens_per_task": 0.0, "completion_tokens_per_task": 0.0, "iterations_per_task": 3.0,
           "holdout_iterations_per_task": 3.0, "holdout_validations_per_task": 4.0, "tool_calls_per_task": 0.0,
           "holdout_compiled_reused_per_task": 0.0,
           "leakage": {"payload_chars_in_history_mean": 0.0, "payload_chars_in_history_max": 0, "large_returns": 0},
           "memory_growth": {"items_start": 0, "items_end": 0, "success_gain": 0.0, "gain_per_100_items": None},
           "dedup_rate": None, "conflicts": 0, "exception_use": 0}
    assert ConditionSummary.from_dict(old).verify_runs_per_task == 0.0
