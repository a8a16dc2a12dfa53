"""The LM ablation end to end: a replaying OpenAI-compatible server on loopback drives A0-A4 through litellm."""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm must not fetch its price list (no network)

import functools  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from test_provider import ScriptedServer, action  # noqa: E402
from test_report import PLOTS, chromium  # noqa: E402

from owl_memory import Memory  # noqa: E402
from owl_memory.ablation.harness import ablate  # noqa: E402
from owl_memory.ablation.records import read_records  # noqa: E402
from owl_memory.errors import ConfigError  # noqa: E402

CURRICULUM = Path(__file__).parent / "data" / "ablation" / "mini.yaml"
GOLD = {"Name one direct subclass of lib:Work.": "Book", "Name the class for lending institutions.": "Library",
        "Name the superclass of lib:Book.": "Work", "Name the class of people who write.": "Person"}
CONDITIONS = ("A0", "A1", "A2", "A3", "A4")
BUDGETS = ("--max-iters", "4", "--max-llm-calls", "7")  # not the defaults (12, 20): the runs must get these
# Step one reads memory through whatever tools the condition has and prints the best item's content when a tool
# returns it (only A4's do); step two answers right only when memory gave it something.
STEP_ONE = """# step one
try:
    found = memory_search(task_type='hierarchy')['items']
except NameError:
    found = []
g = memory_get(found[0]['id']) if found else {}
print(len(found), str(g.get('content', ''))[:3000])"""
STEP_TWO = ("SUBMIT(answer={gold!r} if found or 'prior_experience' in globals() or 'Memory hint' in task "
            "else 'unknown')")


def respond(body: dict) -> str:
    """The scripted agent: the same two steps in every condition, the gold answer of the task it is asked."""
    sent = json.dumps(body["messages"])
    gold = next(g for q, g in GOLD.items() if q in sent)
    if "# step one" in sent:
        return action("Answer.", STEP_TWO.format(gold=gold))
    return action("Look in memory.", STEP_ONE)


def _start_killable(out: Path, base: str) -> subprocess.Popen:
    """`owl-memory ablate` over A2 in its own process group. One condition runs in the command's own process: each
    process pays ~7 s of CPU importing dspy and litellm (parallel workers are covered by the construction tests)."""
    cmd = [sys.executable, "-m", "owl_memory", "ablate", str(CURRICULUM), "--conditions", "A2", "--lm",
           "openai/replay", "--api-base", base, "--out", str(out), *BUDGETS]
    env = {**os.environ, "OPENAI_API_KEY": "local-server"}
    return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)


def _records(part: Path) -> int:
    """Complete records in a part file (0 before it exists)."""
    return part.read_text().count("\n") if part.exists() else 0


def _held_after(part: Path, lines: int, release: threading.Event):
    """`respond`, except that once `part` holds `lines` records every request waits for `release`: the process asking
    cannot finish another record before it is killed (no race with it)."""
    def reply(body: dict) -> str:
        """The scripted reply, held back while the part file holds `lines` records or more."""
        if _records(part) >= lines:
            release.wait()
        return respond(body)
    return reply


def _kill_after(proc: subprocess.Popen, part: Path, lines: int) -> list[str]:
    """Kill the process group once `part` holds `lines` records (polled: the LM server holds the process's next
    request from then on); the records written before the kill."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and _records(part) < lines:
        time.sleep(0.05)
    assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)
    return [line for line in part.read_text().splitlines(keepends=True) if line.endswith("\n")]


@pytest.fixture(scope="module")
def ablation(tmp_path_factory):
    """A2 (`owl-memory ablate`, on an LM server that holds its requests once it wrote its third record) killed after
    that record while A0, A1 and A3 run in this process over the same DIR (the command's start-up overlaps real
    work), then all five over that DIR: A2 resumes, A4 runs, the rest are done. In this process, so the suite stays
    fast."""
    out = tmp_path_factory.mktemp("ablation")
    os.environ.setdefault("OPENAI_API_KEY", "local-server")
    run = functools.partial(ablate, CURRICULUM, out=out, lm="openai/replay", holdout_every=1, parallel=False,
                            max_iters=4, max_llm_calls=7)
    part, release = out / "parts" / "A2-r0.jsonl", threading.Event()
    with ScriptedServer([], respond=respond) as server, ScriptedServer([], respond=_held_after(part, 3, release)) \
            as held, ThreadPoolExecutor(1) as killer:
        try:
            kill = killer.submit(_kill_after, _start_killable(out, held.base), part, 3)
            run("A0,A1,A3", api_base=server.base)
            before = kill.result()
        finally:
            release.set()
        summary = run(",".join(CONDITIONS), api_base=server.base)
    return out, before, summary


@pytest.mark.slow
def test_every_record_present_and_well_formed(ablation):
    out, _, summary = ablation
    recs = read_records(out / "results.jsonl")
    per = 3 * 2 + 2  # checkpoints 0, 1, 2 over two holdout tasks, plus two train tasks
    assert len(recs) == 5 * per and len({r.key for r in recs}) == len(recs)
    assert {r.condition for r in recs} == set(CONDITIONS) and summary.settings["kind"] == "lm"
    for line in (out / "results.jsonl").read_text().splitlines():
        d = json.loads(line)
        for key, kind in (("success", bool), ("judge", str), ("iterations", int), ("lm_calls", int),
                          ("prompt_tokens", int), ("completion_tokens", int), ("tool_calls", int),
                          ("payload_chars_in_history", int), ("large_returns", int), ("memory_ids_used", list),
                          ("extracted", list), ("memory_items", int), ("seconds", float)):
            assert isinstance(d[key], kind), (key, d)
        assert d["error"] is None and d["iterations"] == 2 and d["lm_calls"] == 2
        assert d["prompt_tokens"] == 200 and d["completion_tokens"] == 20  # the server's usage, two calls
        assert d["judge"] == "answer"
    tools = {c: sum(r.tool_calls for r in recs if r.condition == c) for c in CONDITIONS}
    assert tools["A0"] == tools["A1"] == 0 and min(tools["A2"], tools["A3"], tools["A4"]) > 0


@pytest.mark.slow
def test_budgets_reach_every_run_including_those_the_command_line_started(ablation):
    out, before, summary = ablation
    assert (summary.settings["max_iters"], summary.settings["max_llm_calls"]) == (4, 7)
    for stem in ("A2-r0", "A4-r0"):  # A2: started by `owl-memory ablate --max-iters 4 --max-llm-calls 7`, resumed
        texts = [p.read_text() for p in (out / "runs" / stem).glob("*.jsonl")]
        configs = [json.loads(t.split("\n", 1)[0])["config"] for t in texts if "\n" in t]  # the kill may tear one
        assert len(configs) >= 8 and {(c["max_iters"], c["max_llm_calls"]) for c in configs} == {(4, 7)}, stem


@pytest.mark.slow
def test_memory_conditions_learn_and_holdout_writes_nothing(ablation):
    out, _, summary = ablation
    recs = read_records(out / "results.jsonl")
    s = summary.conditions
    assert [h.mean for h in s["A0"].holdout] == [0.0, 0.0, 0.0]
    for c in ("A1", "A2", "A3", "A4"):  # nothing to use before training; the trained memory gives the answers
        assert s[c].holdout[0].mean == 0.0 and s[c].holdout[-1].mean == 1.0, c
    assert all(r.extracted == () for r in recs if r.phase == "holdout")
    for c in ("A2", "A4"):
        train = [r for r in recs if r.condition == c and r.phase == "train"]
        assert sum(len(r.extracted) for r in train) > 0
        with Memory(out / "memories" / f"{c}-r0") as m:
            runs = m.sparql("PREFIX om: <http://w3id.org/owl-memory#> SELECT ?t WHERE { ?r a om:Run ; om:taskId ?t }")
            items = len(m)
        assert sorted(row[0] for row in runs.rows) == ["mini-train-1", "mini-train-2"]  # no holdout run stored
        assert items == train[-1].memory_items
        assert {r.memory_items for r in recs if r.condition == c and r.checkpoint == 2 and r.phase == "holdout"} == \
            {items}


@pytest.mark.slow
def test_a4_leaks_payload_a2_and_a3_do_not(ablation):
    out, _, summary = ablation
    leak = {c: summary.conditions[c].leakage.payload_chars_in_history_max for c in CONDITIONS}
    assert leak["A2"] == leak["A3"] == 0 and leak["A4"] > 100
    recs = read_records(out / "results.jsonl")
    a4 = [r for r in recs if r.condition == "A4" and r.phase == "holdout" and r.checkpoint == 2]
    assert all(r.payload_chars_in_history > 0 and r.large_returns > 0 for r in a4)


@pytest.mark.slow
def test_resume_after_a_kill_keeps_finished_tasks(ablation):
    out, before, _ = ablation
    assert len(before) >= 3
    part = (out / "parts" / "A2-r0.jsonl").read_text().splitlines(keepends=True)
    assert part[:len(before)] == before  # the finished records were not redone (same seconds, same ids)
    keys = [r.key for r in read_records(out / "parts" / "A2-r0.jsonl")]
    assert len(keys) == 8 and len(set(keys)) == 8


@pytest.mark.slow
def test_report_renders_in_the_browser(ablation, tmp_path):
    out, _, _ = ablation
    page = out / "report.html"
    dom = chromium("--dump-dom", page.as_uri(), tmp_path=tmp_path).stdout.decode()
    assert set(PLOTS) <= set(re.findall(r'<svg id="([^"]+)" class="plot"', dom))
    assert all(c in dom for c in CONDITIONS)


def test_lm_curriculum_needs_an_lm_and_known_conditions(tmp_path, monkeypatch):
    monkeypatch.delenv("OWL_MEMORY_LM", raising=False)
    with pytest.raises(ConfigError, match="--lm MODEL"):
        ablate(CURRICULUM, "A0,A2", out=tmp_path / "x")
    with pytest.raises(ConfigError, match="A6"):
        ablate(CURRICULUM, "A0,A6", out=tmp_path / "x", lm="openai/replay")
    with pytest.raises(ConfigError, match="--max-llm-calls must be at least 1"):
        ablate(CURRICULUM, "A0,A2", out=tmp_path / "x", lm="openai/replay", max_llm_calls=0)
    assert not (tmp_path / "x").exists()


def test_pack_seeds_every_memory_condition_and_the_api_is_exported(tmp_path):
    import owl_memory
    from owl_memory.ablation.harness import Job, _prepare
    from owl_memory.learning.packs import pack_path, read_pack

    assert owl_memory.ablate is ablate
    pack = str(pack_path("starter"))
    for cond in ("A0", "A2"):
        _prepare(Job(str(CURRICULUM), cond, 0, str(tmp_path), 1, kind="lm", pack=pack))
    with Memory(tmp_path / "memories" / "A0-r0") as m:
        assert len(m) == 0  # A0 has no memory to seed: its tasks get copies of an empty one
    with Memory(tmp_path / "memories" / "A2-r0") as m:
        assert len(m) == len(read_pack(Path(pack), "starter")) > 0
