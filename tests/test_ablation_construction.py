"""The offline construction ablation: A0 vs A2 on the shipped curriculum, holdout ontologies unseen in training."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rdflib import Graph, URIRef
from rdflib.namespace import SH

from owl_memory.ablation.construction import load_construction
from owl_memory.ablation.harness import Job, ablate, run_job, schedule
from owl_memory.ablation.records import TaskOutcome, read_records
from owl_memory.cli import main
from owl_memory.errors import ConfigError, LoadError

CURRICULUM = Path(__file__).resolve().parents[1] / "experiments" / "construction" / "curriculum.yaml"


def test_schedule_checkpoints():
    """Holdout before training and after every N train tasks, the last one included."""
    assert [s[:3] for s in schedule(3, 2)] == [("holdout", 0, 0), ("train", 1, 0), ("train", 1, 1), ("holdout", 1, 2),
                                               ("train", 2, 2), ("holdout", 2, 3)]


def test_holdout_ontologies_are_unseen():
    """No holdout task shares a data file, a shapes file, a shape IRI or a domain namespace with a train task."""
    cur = load_construction(CURRICULUM)
    train = {p for t in cur.train for p in (t.data, t.shapes, t.sprint) if p}
    train_shapes = {s for t in cur.train if t.shapes for s in Graph().parse(t.shapes).subjects()
                    if isinstance(s, URIRef)}
    for t in cur.holdout:
        assert t.data not in train and t.shapes not in train
        assert not train_shapes & set(Graph().parse(t.shapes).subjects())
        targets = Graph().parse(t.shapes).objects(None, SH.targetClass)
        for domain in {str(c).rsplit("#", 1)[0] + "#" for c in targets}:  # the holdout ontology's namespace
            assert all(domain not in p.read_text() for p in train), domain


@pytest.fixture(scope="module")
def construction_run(tmp_path_factory):
    """One A0/A2 ablation over the shipped curriculum, checkpoints before and after training, the two conditions in
    parallel (spawned) processes as users run it."""
    out = tmp_path_factory.mktemp("construction")
    return out, ablate(CURRICULUM, "A0,A2", out=out, holdout_every=3, parallel=True)


@pytest.mark.slow
def test_memory_helps_on_unseen_ontologies(construction_run):
    """After training, A2 needs fewer verify iterations (and validations) per holdout task than A0; before, the same.

    Nothing is shared between the train and holdout shapes but constraint components and path forms: the gain is
    the learned follow-ups (a fix that caused another violation on the same shape) applied before verifying."""
    out, s = construction_run
    a0, a2 = s.conditions["A0"].holdout, s.conditions["A2"].holdout
    assert [h.checkpoint for h in a2] == [0, 1]
    assert a2[0].iterations == a0[0].iterations and a2[0].validations == a0[0].validations
    assert a2[1].iterations < a0[1].iterations
    assert a2[1].validations < a0[1].validations
    assert a2[1].mean == a0[1].mean == 1.0
    hold = [r for r in read_records(out / "results.jsonl") if r.phase == "holdout" and r.checkpoint == 1]
    assert all(r.compiled_reused > 0 for r in hold if r.condition == "A2")
    assert all(r.compiled_reused == 0 for r in hold if r.condition == "A0")


@pytest.mark.slow
def test_records_and_frozen_holdout(construction_run):
    """Every (condition, phase, checkpoint, task) has one record; holdout runs never grow the memory."""
    out, s = construction_run
    recs = read_records(out / "results.jsonl")
    assert len(recs) == 2 * (3 + 2 * 2) and len({r.key for r in recs}) == len(recs)
    a2 = [r for r in recs if r.condition == "A2"]
    trained = max(r.memory_items for r in a2 if r.phase == "train")
    assert trained > 0 and all(r.memory_items == trained for r in a2 if r.phase == "holdout" and r.checkpoint == 1)
    assert all(r.extracted == () for r in recs if r.phase == "holdout")
    from owl_memory import Memory

    with Memory(out / "memories" / "A2-r0") as m:
        assert len(m) == trained
    assert (out / "report.html").is_file() and json.loads((out / "summary.json").read_text())["records"] == 14


@pytest.mark.slow
def test_resume_skips_finished(construction_run):
    """A rerun over the same folder runs nothing; a torn part file reruns only the missing tasks."""
    out, _ = construction_run
    job = Job(str(CURRICULUM), "A0", 0, str(out), 3)
    assert run_job(job) == 0
    part = out / "parts" / "A0-r0.jsonl"
    lines = part.read_text().splitlines(keepends=True)
    part.write_text("".join(lines[:-2]) + lines[-2][:20])
    assert run_job(job) == 2
    keys = [r.key for r in read_records(part)]
    assert len(keys) == 7 and len(set(keys)) == 7


def test_bad_curricula(tmp_path):
    """Unknown conditions, missing files and no holdout split are typed errors naming the fix."""
    with pytest.raises(ConfigError, match="A9"):
        ablate(CURRICULUM, "A0,A9", out=tmp_path / "x")
    bad = tmp_path / "c.yaml"
    bad.write_text("id: x\nkind: construction\ntasks:\n  - {id: a, repair: {data: nope.ttl, shapes: nope.ttl}}\n")
    with pytest.raises(LoadError, match="nope.ttl"):
        load_construction(bad)
    r = CliRunner().invoke(main, ["ablate", str(bad), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "nope.ttl" in r.output


@pytest.mark.slow
def test_a_kill_after_a_train_task_wrote_memory_does_not_learn_it_twice(construction_run, tmp_path):
    """A train task cut after its memory write but before its record: the resume puts the memory back first."""
    from owl_memory import ItemSpec, Memory
    from owl_memory.ablation.construction import run_construction
    from owl_memory.errors import UnknownItem

    out, _ = construction_run
    job, cut, written = Job(str(CURRICULUM), "A2", 0, str(tmp_path), 3), [], []

    def killed_on_second_train_task(task, memory, learn):
        fields = run_construction(task, memory)
        if learn and task.split == "train" and (cut.append(task.id) or len(cut) == 2):
            written.append(memory.add(ItemSpec("Principle", "Written by the cut task", "Use when never.", "x")))
            raise KeyboardInterrupt  # the kill lands after the task wrote memory, before its record
        return fields

    with pytest.raises(KeyboardInterrupt):
        run_job(job, killed_on_second_train_task)
    assert len(read_records(tmp_path / "parts" / "A2-r0.jsonl")) == 3  # two holdout tasks, the first train task
    assert run_job(job) == 4
    with Memory(tmp_path / "memories" / "A2-r0") as resumed, Memory(out / "memories" / "A2-r0") as straight:
        with pytest.raises(UnknownItem):
            resumed.get(written[0])
        assert len(resumed) == len(straight) and len(resumed.to_graph()) == len(straight.to_graph())
    assert sorted(p.name for p in (tmp_path / "memories").iterdir()) == ["A2-r0"]  # no backup left behind


def test_whatever_a_holdout_task_writes_is_thrown_away(tmp_path):
    """A task runner that writes an item in every task it gets: the arm's memory keeps only what train tasks wrote
    (A2), or nothing (A0); each holdout checkpoint sees the memory as training left it."""
    from owl_memory import ItemSpec, Memory

    def writes_everywhere(task, memory, learn):
        memory.add(ItemSpec("Principle", f"Written by {task.id} as {task.split}", "Use when never.", "x"))
        return TaskOutcome(True, "shacl")

    for cond, kept in (("A2", ["library-repair", "museum-repair", "sprint1"]), ("A0", [])):
        job = Job(str(CURRICULUM), cond, 0, str(tmp_path), 3)
        assert run_job(job, writes_everywhere) == 7
        with Memory(tmp_path / "memories" / f"{cond}-r0") as m:
            assert sorted(h.title.split()[2] for h in m.search(k=50)) == kept
        hold = [r for r in read_records(tmp_path / "parts" / f"{cond}-r0.jsonl") if r.phase == "holdout"]
        assert [r.memory_items for r in hold] == [0, 0, len(kept), len(kept)]


def test_command_line_checkpoints_repeats_and_pack(tmp_path):
    """`owl-memory ablate --holdout-every 2 --repeats 2 --pack starter --json`: checkpoints before training and after
    every second train task, each repeat over its own memory seeded with the pack, the interval over the two repeats
    (Student's t: equal repeats give a zero-width interval, where Wilson's over the pooled outcomes would not).
    A2 only, eight repairs: A0 without a pack is covered above."""
    from owl_memory import Memory
    from owl_memory.learning.packs import pack_path, read_pack

    folder = CURRICULUM.parent
    (tmp_path / "c.yaml").write_text(json.dumps({"id": "small", "kind": "construction", "tasks": [
        {"id": t, "repair": {"data": str(folder / f"{t}.data.ttl"), "shapes": str(folder / f"{t}.shapes.ttl")},
         "split": split} for t, split in (("library", "train"), ("museum", "train"), ("clinic", "holdout"))]}))
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["ablate", str(tmp_path / "c.yaml"), "--conditions", "A2", "--out", str(out),
                                  "--holdout-every", "2", "--repeats", "2", "--pack", "starter", "--serial", "--json"])
    assert r.exit_code == 0, r.output
    s, packed = json.loads(r.stdout), len(read_pack(pack_path("starter"), "starter"))
    assert (s["holdout_every"], s["repeats"], s["records"]) == (2, 2, 2 * (2 + 2))
    curve = s["conditions"]["A2"]["holdout"]
    assert [(h["train_seen"], h["repeats"]) for h in curve] == [(0, 2), (2, 2)]
    assert all(h["low"] == h["mean"] == h["high"] for h in curve) and curve[0]["memory_items"] == packed
    sizes = []
    for rep in (0, 1):
        with Memory(out / "memories" / f"A2-r{rep}") as m:
            sizes.append(len(m))
    assert sizes[0] == sizes[1] > packed  # two memories, each the pack plus what its own train tasks compiled
    assert {p.name for p in (out / "memories").iterdir()} == {"A2-r0", "A2-r1"}
