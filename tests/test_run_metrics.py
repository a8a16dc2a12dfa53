"""What every run measures and how every LM call is bounded, through litellm against a scripted local server:
convergence, sub-LM calls apart, cost by litellm's local price map, max_tokens in both forms, the per-call timeout,
and what a failed run keeps (its metrics, a JSON error under --json, an ablation record with its iterations)."""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm must not fetch its price list (no network)

import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
import yaml  # noqa: E402
from click.testing import CliRunner  # noqa: E402
from dspy.utils import DummyLM  # noqa: E402
from test_provider import ScriptedServer, action  # noqa: E402

from owl_memory.ablation.harness import ablate  # noqa: E402
from owl_memory.agent.metrics import spent  # noqa: E402
from owl_memory.agent.runner import run  # noqa: E402
from owl_memory.agent.trajectory import read_trajectory  # noqa: E402
from owl_memory.cli import main  # noqa: E402
from owl_memory.model import RunComplete, RunStart  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PRICE_IN, PRICE_OUT = 1.5e-07, 6e-07  # gpt-4o-mini in the litellm price map dspy 3.4.1 installs
SUB_STEP = action("Ask the sub-LM.", "y = llm_query('Say hi.')\nprint(y)")


def bare(body: dict) -> bool:
    """True for an llm_query request (a bare prompt, not dspy's formatted RLM step)."""
    return "[[ ## " not in json.dumps(body["messages"])


def test_converged_says_whether_submit_came_before_the_iteration_limit(tmp_path):
    done = run("t", lm=DummyLM([{"reasoning": "a", "code": "SUBMIT(answer='x')"}]), condition="A0",
               trajectory_dir=tmp_path)
    forced = run("t", lm=DummyLM([{"reasoning": "a", "code": "x = 1"}, {"answer": "y"}]), max_iters=1,
                 condition="A0", trajectory_dir=tmp_path)
    assert done.metrics.converged and not forced.metrics.converged
    end = read_trajectory(forced.trajectory_path)[-1]
    assert isinstance(end, RunComplete) and end.metrics.converged is False


def test_sub_lm_calls_priced_and_counted_apart_and_both_token_limits_sent(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    def reply(body):
        if bare(body):
            return "hi"
        return SUB_STEP if "Ask the sub-LM" not in json.dumps(body["messages"]) else action("Done.", "SUBMIT(answer=y)")

    with ScriptedServer([], respond=reply) as server:
        r = run("t", lm="openai/gpt-4o-mini", api_base=server.base, max_tokens=64, condition="A0",
                trajectory_dir=tmp_path)
        apart = run("t", lm="openai/gpt-4o-mini", sub_lm="openai/gpt-4o-mini-sub", api_base=server.base,
                    condition="A0", trajectory_dir=tmp_path)
    m = r.metrics
    assert r.answer == "hi" and (m.lm_calls, m.sub_lm_calls) == (3, 1)  # two RLM steps and one llm_query
    assert (m.prompt_tokens, m.completion_tokens, m.sub_prompt_tokens, m.sub_completion_tokens) == (300, 30, 100, 10)
    assert m.cost_usd == pytest.approx(300 * PRICE_IN + 30 * PRICE_OUT)
    sent = [r["body"] for r in server.requests]
    assert all(b.get("max_tokens") == 64 and b.get("max_completion_tokens") == 64 for b in sent[:3])
    assert [b["model"] for b in sent[3:]] == ["gpt-4o-mini", "gpt-4o-mini-sub", "gpt-4o-mini"]
    assert apart.metrics.sub_lm_calls == 1 and apart.metrics.lm_calls == 3
    assert apart.metrics.cost_usd is None  # the sub-model is not in litellm's price map: the cost is unknown
    start = read_trajectory(apart.trajectory_path)[0]
    assert isinstance(start, RunStart) and start.config.sub_lm == "openai/gpt-4o-mini-sub"


def test_a_scripted_run_costs_nothing(tmp_path):
    r = run("t", lm="scripted", condition="A0", trajectory_dir=tmp_path)
    assert r.metrics.cost_usd == 0.0 and r.metrics.prompt_chars > 1000


@pytest.mark.slow
def test_a_call_past_its_timeout_fails_the_run_instead_of_waiting(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    def slow(body):
        time.sleep(4)
        return action("Late.", "SUBMIT(answer='late')")

    t0 = time.monotonic()
    with ScriptedServer([], respond=slow) as server, pytest.raises(Exception, match="[Tt]ime"):
        run("t", lm="openai/gpt-4o-mini", api_base=server.base, timeout=0.3, condition="A0", trajectory_dir=tmp_path)
    assert time.monotonic() - t0 < 4 * 4  # dspy retries a timed-out call 3 times, each cut at 0.3 s


def failing_server():
    """Two good RLM steps (one asks the sub-LM), then completions no adapter can parse."""
    return ScriptedServer([action("a", "x = 1\nprint(x)"), SUB_STEP, "hi"] + ["not in any format"] * 30)


def test_a_failed_run_keeps_what_it_spent(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with failing_server() as server, pytest.raises(Exception) as caught:
        run("t", lm="openai/gpt-4o-mini", api_base=server.base, condition="A0", trajectory_dir=tmp_path)
    metrics, trajectory = spent(caught.value)
    assert metrics.iterations == 2 and metrics.sub_lm_calls == 1 and metrics.prompt_tokens >= 400
    end = read_trajectory(trajectory)[-1]
    assert isinstance(end, RunComplete) and end.status == "error" and end.metrics.iterations == 2
    assert end.to_dict()["iterations"] == 2 and end.to_dict()["prompt_tokens"] == metrics.prompt_tokens


def test_a_failed_run_json_prints_a_json_error_on_stdout(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with failing_server() as server:
        res = CliRunner().invoke(main, ["run", "anything", "--lm", "openai/gpt-4o-mini", "--api-base", server.base,
                                        "--memory", str(tmp_path / "mem"), "--condition", "A0", "--json"])
    assert res.exit_code == 1
    error = json.loads(res.stdout.strip().splitlines()[-1])
    assert error["error"] == "AdapterParseError" and error["metrics"]["iterations"] == 2
    assert Path(error["trajectory"]).is_file() and error["metrics"]["prompt_tokens"] >= 400


def test_an_ablation_records_what_failed_runs_spent(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({"id": "tiny", "ontology": {"name": "library", "path": str(
        ROOT / "experiments" / "curricula" / "library.ttl")}, "tasks": [
        {"id": "t1", "query": "Name one direct subclass of lib:Work.", "expect": {"answer": "Book"}, "split": "train"},
        {"id": "h1", "query": "Name the superclass of lib:Book.", "expect": {"answer": "Work"}, "split": "holdout"}]}))

    def reply(body):
        text = json.dumps(body["messages"])
        if bare(body):
            return "hi"
        return SUB_STEP if "Ask the sub-LM" not in text else "not in any format"

    with ScriptedServer([], respond=reply) as server:
        summary = ablate(tmp_path / "c.yaml", "A0", out=tmp_path / "out", lm="openai/gpt-4o-mini",
                         api_base=server.base, parallel=False)
    records = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert len(records) == 3 and all(r["judge"] == "error" and "AdapterParseError" in r["error"] for r in records)
    assert all(r["iterations"] == 1 and r["sub_lm_calls"] == 1 and r["prompt_tokens"] >= 200 for r in records)
    assert all(r["converged"] is False and r["cost_usd"] > 0 for r in records)
    a0 = summary.conditions["A0"]
    assert a0.errors == 3 and a0.tokens_per_task > 0 and a0.converged_rate == 0.0 and a0.cost_usd_total > 0
