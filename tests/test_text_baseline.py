"""The text baselines: A1 retrieves by text and applicability with a per-polarity quota, in a bounded "Relevant prior
experience" block, never from its own task; A5 offers memory as plain files read and grepped through capped tools."""

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from dspy.utils import DummyLM

from owl_memory import ItemSpec
from owl_memory.agent.runner import run
from owl_memory.agent.trajectory import read_trajectory
from owl_memory.model import Iteration, RunStart
from owl_memory.provenance import RunInfo, provenance_graph

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ROOT / "experiments" / "curricula" / "library.ttl"
ONTO = "http://w3id.org/owl-memory/examples/library"
TRACE = "sha256:" + "0" * 64
TASK = "Which classes are direct subclasses of lib:Work?"


def made_by(memory, run_id: str, task_id: str, reextracted=()) -> None:
    """Provenance of one run of `task_id`, as the learning loop writes it."""
    now = datetime.now(timezone.utc)
    memory.write_graph(provenance_graph(RunInfo(run_id, "scripted", "A1", now, now, ONTO, task_id,
                                                reextracted=tuple(reextracted)), None))


def learned(memory, kind: str, title: str, task_id: str, task_type: str = "hierarchy", ontology: str = ONTO) -> str:
    """An item a run of `task_id` generated (kind decides its polarity: AntiPattern failure, else success)."""
    run_id = f"run-{task_id}-{title.split()[0].lower()}"
    made_by(memory, run_id, task_id)
    return memory.add(ItemSpec(kind, title, f"Use for {task_type} questions: {title.lower()}.",
                               "- first step\n- second step\n- third step\n- FOURTH-STEP\n" + "BODY " * 40,
                               applies_to=(ontology,), task_types=(task_type,),
                               provenance={"run": run_id, "derived_from": TRACE}))


@pytest.fixture
def stocked(memory):
    """Learned successes and failures, a seed item, and items for another ontology and another task type."""
    ids = {"s1": learned(memory, "Procedure", "Subclasses by one triple pattern", "t1"),
           "s2": learned(memory, "Procedure", "Subclasses listed from describe", "t2"),
           "s3": learned(memory, "Principle", "Direct subclasses exclude the class itself", "t3"),
           "f1": learned(memory, "AntiPattern", "Avoid transitive paths for direct subclasses", "t4"),
           "f2": learned(memory, "AntiPattern", "Avoid guessing subclasses from labels", "t5"),
           "other": learned(memory, "Procedure", "Subclasses in the other ontology", "t6",
                            ontology="http://example.org/other"),
           "lookup": learned(memory, "Procedure", "Lookup a label by its IRI", "t7", task_type="lookup")}
    ids["seed"] = memory.add(ItemSpec("Principle", "Read the ontology card before querying",
                                      "Use for any question about the ontology's classes.", "- look at the card",
                                      applies_to=(ONTO,), task_types=("hierarchy",)))
    return memory, ids


def started(r) -> RunStart:
    """The run_start event of a run's trajectory."""
    start = read_trajectory(r.trajectory_path)[0]
    assert isinstance(start, RunStart)
    return start


def a1(memory, tmp_path, task=TASK, **options):
    """One A1 run over the library ontology; the prior_experience input it was given, the first user message and the
    run."""
    lm = DummyLM([{"reasoning": "done", "code": "SUBMIT(answer='ok')"}])
    options = {"task_type": "hierarchy", **options}
    r = run(task, memory, ontology=LIBRARY, lm=lm, condition="A1", trajectory_dir=tmp_path, **options)
    user = lm.history[0]["messages"][-1]["content"]
    preview = user.split("Variable: `prior_experience`", 1)[1].split("```", 2)[1] if "prior_experience" in user else ""
    return "\n".join(line.removeprefix("    ") for line in preview.strip("\n").splitlines()), r


def test_a1_injects_two_successes_one_failure_and_one_seed_in_the_assess_block(stocked, tmp_path):
    memory, ids = stocked
    user, r = a1(memory, tmp_path)
    assert "## Relevant prior experience" in user and "briefly assess which of these items apply" in user
    assert "..." not in user and len(user) <= 1000  # the model's preview shows the whole block
    shown = list(r.memory_ids_used)
    polarity = {i: ("failure" if i in (ids["f1"], ids["f2"]) else "seed" if i == ids["seed"] else "success")
                for i in shown}
    assert sorted(polarity.values()) == ["failure", "seed", "success", "success"]
    assert ids["other"] not in shown and ids["lookup"] not in shown  # another ontology, another task type
    assert user.count("### ") == 4
    assert all(f"({label}, " in user for label in ("what worked", "what failed", "seed advice"))
    assert "FOURTH-STEP" not in user and "BODY" not in user and user.count("\n* ") == 4 * 3 - 2  # <= 3 bullets
    assert list(started(r).memory_ids_injected) == shown


def test_a1_finds_applicable_items_without_a_shared_word_and_k_takes_the_top_n(stocked, tmp_path):
    memory, ids = stocked
    _, r = a1(memory, tmp_path, task="Zzyzx?")  # no word in common: the ontology and the task type still apply
    assert len(r.memory_ids_used) == 4 and ids["other"] not in r.memory_ids_used
    _, r = a1(memory, tmp_path, k=1)
    assert len(r.memory_ids_used) == 1
    _, r = a1(memory, tmp_path, k="0,2,0")
    assert set(r.memory_ids_used) == {ids["f1"], ids["f2"]}


def test_a1_never_injects_what_its_own_task_made_and_records_what_it_left_out(stocked, tmp_path):
    memory, ids = stocked
    memory.supersede(ids["s3"], ids["s2"])  # s2 now stands for s3, which task t3 made
    made_by(memory, "run-t9-again", "t9", reextracted=[ids["f1"]])  # t9's extraction produced f1 again
    for task_id, gone in (("t1", {ids["s1"]}), ("t3", {ids["s2"]}), ("t9", {ids["f1"]})):
        user, r = a1(memory, tmp_path, task_id=task_id)
        assert not gone & set(r.memory_ids_used) and set(r.memory_ids_filtered) == gone, task_id
        assert all(f"id {i}" not in user for i in gone)
        assert list(started(r).memory_ids_filtered) == sorted(gone)
    _, r = a1(memory, tmp_path, task_id="t8")  # a task that made nothing loses nothing
    assert r.memory_ids_filtered == () and len(r.memory_ids_used) == 4


def test_a1_text_stays_within_its_l2_budget_whole_items_only(stocked, tmp_path):
    memory, _ = stocked
    _, r_full = a1(memory, tmp_path)
    short, r = a1(memory, tmp_path, budgets="L2=420")
    assert 0 < len(r.memory_ids_used) < len(r_full.memory_ids_used) and len(short.strip()) <= 420
    assert short.count("### ") == len(r.memory_ids_used)  # whole items: each shown one is there with its heading
    assert started(r).memory_ids_injected == r.memory_ids_used


def test_a5_reads_memory_as_plain_files_through_capped_tools(stocked, tmp_path):
    memory, ids = stocked
    script = [
        "ls = files_list()\nprint(ls['count'], [f['path'] for f in ls['files']][:3])",
        "g = files_grep('SECOND step')\nprint(g['count'], g['matches'][0])",
        "w = files_read(g['matches'][0]['path'], 0, 5000)\nbad = files_read('Procedure/nothing.md')\n"
        "print(len(w['text']), w['size'], bad[:40])",
        "SUBMIT(answer=str(ls['count']))"]
    lm = DummyLM([{"reasoning": f"step {i}", "code": c} for i, c in enumerate(script)])
    r = run(TASK, memory, ontology=LIBRARY, lm=lm, condition="A5", trajectory_dir=tmp_path, read_budget=3000)
    events = read_trajectory(r.trajectory_path)
    tools = started(r).config.tools
    assert {"files_list", "files_grep", "files_read"} <= set(tools) and "memory_search" not in tools
    assert r.answer == str(len(ids)) and "[[ ## " not in r.answer
    outputs = [e.output for e in events if isinstance(e, Iteration)]
    assert outputs[0].startswith(str(len(ids)))
    assert outputs[1].startswith("7 ") and "'line': 7, 'text': '- second step'" in outputs[1]
    size = int(outputs[2].split()[1])
    assert int(outputs[2].split()[0]) == min(512, size) and "[Error] files_read: no such file" in outputs[2]
    assert 0 < r.metrics.read_chars <= 3000 and r.metrics.max_window <= 512
    assert r.memory_ids_used and set(r.memory_ids_used) <= set(ids.values())
    sent = json.dumps(lm.history[-1]["messages"])
    assert "FOURTH-STEP" not in sent  # the read window was not printed: nothing of the file beyond it leaked


def test_only_a5_has_the_files_and_a5_has_no_memory_search(stocked, tmp_path):
    memory, _ = stocked
    for condition, has_files in (("A2", False), ("A1", False), ("A5", True)):
        lm = DummyLM([{"reasoning": "done", "code": "SUBMIT(answer='ok')"}])
        r = run(TASK, memory, ontology=LIBRARY, lm=lm, condition=condition, trajectory_dir=tmp_path)
        tools = started(r).config.tools
        assert ("files_grep" in tools) == has_files and ("memory_search" in tools) == (condition == "A2")
