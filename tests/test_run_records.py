"""What a researcher reads in each record: the SPARQL that produced the submitted answer (text and hash), a run that
reached its iteration cap without SUBMIT as a failure of its own mode, the text A1 / A3 injected as a blob key, and
the REPL output cap, settable per run (`--max-output-chars` on run, train and ablate) and per experiment config."""

import json

import yaml
from click.testing import CliRunner
from dspy.utils import DummyLM

from owl_memory import Memory
from owl_memory.ablation import ablate
from owl_memory.ablation.records import read_records
from owl_memory.agent.runner import run as run_agent
from owl_memory.agent.trajectory import read_trajectory
from owl_memory.cli import main
from owl_memory.learning import run as learn, shipped_curriculum
from owl_memory.model import Iteration, RunStart, sha256

LIBRARY = shipped_curriculum().parent / "library.ttl"
QUERY = ("PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> PREFIX lib: <http://w3id.org/owl-memory/examples/"
         "library#> SELECT ?c WHERE { ?c rdfs:subClassOf lib:Work }")
GOLD = {"sparql": QUERY}
ASK = f"r = ontology_query({QUERY!r})\nrows = results_peek(r['handle'], 10)['rows']\nprint('x' * 3000, len(rows))"


def never_submits() -> DummyLM:
    """An agent that queries and prints, but never SUBMITs: dspy forces an answer out of it at the iteration cap."""
    return DummyLM({"": {"reasoning": "Look.", "code": ASK, "answer": "lib:Book, lib:Article, lib:Thesis"}})


def curriculum(tmp_path) -> str:
    """A two-task curriculum over the shipped library ontology: one train task, one holdout task."""
    tasks = [{"id": f"t{n}", "query": "What are the direct subclasses of lib:Work?", "task_type": "hierarchy",
              "expect": GOLD, "split": split} for n, split in ((1, "train"), (2, "holdout"))]
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump({"id": "tiny", "ontology": {"name": "library", "path": str(LIBRARY)},
                                    "tasks": tasks}))
    return str(path)


def test_a_run_that_never_submits_fails_as_iteration_cap_even_with_a_right_forced_answer(memory, tmp_path):
    r = learn("What are the direct subclasses of lib:Work?", memory, ontology=LIBRARY, learn=True, expect=GOLD,
              task_type="hierarchy", lm=never_submits(), max_iters=1, trajectory_dir=tmp_path)
    shown = r.to_dict()
    assert shown["metrics"]["converged"] is False and shown["answer"] == "lib:Book, lib:Article, lib:Thesis"
    assert shown["judgment"]["success"] is False and shown["judgment"]["failure_mode"] == "iteration-cap"
    assert "iteration cap (1) without SUBMIT" in shown["judgment"]["reason"]
    (anti,) = [memory.get(i) for i in r.extracted]
    assert anti.kind == "AntiPattern" and anti.failure_modes == ("iteration-cap",)
    assert shown["answer_query"] == {"tool": "ontology_query", "source": "ontology", "sparql": QUERY,
                                     "sha": sha256(QUERY), "rows": 3, "error": None}


def test_the_output_cap_is_what_the_model_sees_and_the_trajectory_records(tmp_path):
    r = run_agent("t", lm=DummyLM([{"reasoning": "a", "code": "print('y' * 5000)"},
                                   {"reasoning": "b", "code": "SUBMIT(answer='x')"}]), condition="A0",
                  max_output_chars=600, trajectory_dir=tmp_path)
    events = read_trajectory(r.trajectory_path)
    start, step = events[0], next(e for e in events if isinstance(e, Iteration))
    assert isinstance(start, RunStart) and start.config.max_output_chars == 600
    assert step.output_chars == 5000 and step.output.count("y") <= 600  # the model saw at most the cap
    bad = CliRunner().invoke(main, ["run", "t", "--lm", "scripted", "--max-output-chars", "0"])
    assert bad.exit_code == 2 and "--max-output-chars" in bad.output


def test_run_json_names_the_injected_text_by_its_blob_key(tmp_path):
    memory_path = str(tmp_path / "mem")
    args = ["run", "What are the direct subclasses of lib:Work?", "--ontology", str(LIBRARY), "--lm", "scripted",
            "--memory", memory_path, "--task-type", "hierarchy", "--json", "--max-output-chars", "700"]
    first = json.loads(CliRunner().invoke(main, [*args, "--learn", "--expect-sparql", QUERY]).output)
    assert first["injected_ref"] is None and first["answer_query"] is None  # A2: nothing injected; no query ran
    out = CliRunner().invoke(main, [*args, "--condition", "A1"])
    shown = json.loads(out.output)
    with Memory(memory_path) as m:
        text = m.blobs.load(m.blobs.ref(shown["injected_ref"]))
        assert text.startswith("## Relevant prior experience") and m.get(first["extracted"][0]).title in text
    assert "Relevant prior experience" not in out.output
    (start,) = [e for e in read_trajectory(shown["trajectory"]) if isinstance(e, RunStart)]
    assert start.config.max_output_chars == 700


def test_ablation_records_carry_the_answer_sparql_the_failure_mode_the_injected_text_and_the_cap(tmp_path):
    summary = ablate(curriculum(tmp_path), "A0,A1", out=tmp_path / "out", lm=never_submits(), max_iters=1,
                     max_output_chars=500)
    assert summary.settings["max_output_chars"] == 500
    records = read_records(tmp_path / "out" / "results.jsonl")
    assert {(r.condition, r.phase) for r in records} >= {("A0", "train"), ("A1", "holdout")}
    for r in records:
        assert r.answer_sparql == QUERY and r.answer_sparql_hash == sha256(QUERY)
        assert r.converged is False and not r.success and r.failure_mode == "iteration-cap"
        assert r.max_output_chars == 500
    lines = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    injected = [line["injected_ref"] for line in lines if line["condition"] == "A1" and line["phase"] == "holdout"
                and line["checkpoint"] == 1]
    assert injected and all(ref.startswith("sha256:") for ref in injected)  # A1 injected what t1 taught
    assert all(line["injected_ref"] is None for line in lines if line["condition"] == "A0")


def test_an_experiment_config_sets_its_own_output_cap(tmp_path):
    experiment = tmp_path / "caps.yaml"
    experiment.write_text(yaml.safe_dump({"curriculum": curriculum(tmp_path), "configs": {
        "C300": {"condition": "A0", "max_output_chars": 300}, "Cdefault": {"condition": "A0"}}}))
    out = CliRunner().invoke(main, ["ablate", str(experiment), "--conditions", "C300,Cdefault", "--lm", "scripted",
                                    "--max-output-chars", "900", "--out", str(tmp_path / "out"), "--serial"])
    assert out.exit_code == 0, out.output
    caps = {r.condition: r.max_output_chars for r in read_records(tmp_path / "out" / "results.jsonl")}
    assert caps == {"C300": 300, "Cdefault": 900}  # a config's own cap wins over the command line's
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"curriculum": curriculum(tmp_path), "configs": {
        "C": {"condition": "A0", "max_output_chars": "lots"}}}))
    refused = CliRunner().invoke(main, ["ablate", str(bad), "--conditions", "C", "--lm", "scripted", "--out",
                                        str(tmp_path / "bad")])
    assert refused.exit_code == 2 and "max_output_chars" in refused.output


def test_train_json_names_each_runs_injected_text_and_answer_query(tmp_path):
    memory_path = tmp_path / "mem"
    out = CliRunner().invoke(main, ["train", curriculum(tmp_path), "--lm", "scripted", "--condition", "A1", "--split",
                                    "all", "--memory", str(memory_path), "--json", "--max-output-chars", "800"])
    assert out.exit_code == 0, out.output
    first, second = json.loads(out.output)["tasks"]
    assert first["injected_ref"] is None and second["injected_ref"].startswith("sha256:")  # t1's item, shown to t2
    assert first["answer_query"] is None  # the scripted stand-in runs no query
    (start,) = [e for e in read_trajectory(memory_path / "runs" / f"{second['run_id']}.jsonl")
                if isinstance(e, RunStart)]
    assert start.config.max_output_chars == 800
