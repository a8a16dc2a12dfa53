"""The learning CLI through litellm and the replaying OpenAI-compatible server: run --learn, train, packs."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm must not fetch its price list (no network)

import pytest  # noqa: E402
from click.testing import CliRunner  # noqa: E402
from test_provider import ScriptedServer, action  # noqa: E402

from owl_memory import Memory  # noqa: E402
from owl_memory.cli import main  # noqa: E402
from owl_memory.learning import load_curriculum, shipped_curriculum  # noqa: E402
from owl_memory.learning.packs import PACKS, shipped_packs  # noqa: E402

COURSE = load_curriculum(shipped_curriculum())
README = Path(__file__).resolve().parents[1] / "README.md"
PREFIXES = ("PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> "
            "PREFIX lib: <http://w3id.org/owl-memory/examples/library#> ")


def agent(where: str, answer: str = "', '.join(names)") -> list[str]:
    """Two scripted completions: run one SELECT, then submit from its rows."""
    q = PREFIXES + f"SELECT ?x WHERE {{ {where} }}"
    return [action("Query.", f"r = ontology_query({q!r})\nrows = results_peek(r['handle'], 20)['rows']"),
            action("Submit.", f"names = sorted(v.rsplit('#', 1)[1] for row in rows for v in row.values())\n"
                              f"SUBMIT(answer={answer})")]


def cli(args, server):
    """Invoke the CLI against the scripted server."""
    return CliRunner().invoke(main, [*args, "--lm", "openai/scripted", "--api-base", server.base])


def test_run_learn_prints_the_subagent_json_with_judgment_and_extracted(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    t = COURSE.tasks[0]
    with ScriptedServer(agent("?x rdfs:subClassOf lib:Work")) as server:
        res = cli(["run", t.query, "--ontology", str(COURSE.ontology_path), "--expect-sparql", t.expect.gold,
                   "--learn", "--task-type", "hierarchy", "--memory", str(tmp_path / "m"), "--json"], server)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert {"answer", "iterations", "run_id", "trajectory_id", "log_path", "memories_used", "judgment",
            "extracted"} <= set(out)
    assert out["answer"] == "Article, Book, Thesis" and out["judgment"]["success"] and out["iterations"] == 2
    assert out["trajectory_id"].startswith("sha256:") and out["memories_used"] == []
    (item,) = out["extracted"]
    with Memory(tmp_path / "m") as m:
        assert m.get(item).kind == "Procedure" and m.get(item).task_types == ("hierarchy",)


def test_run_judged_wrong_exits_1_and_stores_an_antipattern(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ScriptedServer(agent("?x rdfs:subClassOf lib:Work", "'Book'")) as server:
        res = cli(["run", "Direct subclasses of lib:Work?", "--ontology", str(COURSE.ontology_path), "--expect",
                   "Article, Book, Thesis", "--learn", "--memory", str(tmp_path / "m"), "--json"], server)
    assert res.exit_code == 1, res.output
    out = json.loads(res.stdout)
    assert not out["judgment"]["success"] and out["judgment"]["failure_mode"] == "wrong-answer"
    with Memory(tmp_path / "m") as m:
        assert m.get(out["extracted"][0]).kind == "AntiPattern"


def test_train_streams_the_shipped_curriculum_through_the_loop(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    script = agent("?x rdfs:subClassOf lib:Work") + agent("?x rdfs:subClassOf lib:Organization", "names[0]") + \
        agent("lib:author rdfs:domain ?x")
    with ScriptedServer(script) as server:
        res = cli(["train", str(shipped_curriculum()), "--limit", "3", "--memory", str(tmp_path / "m"), "--json"],
                  server)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["curriculum"] == "library_v1" and out["ran"] == 3 and out["succeeded"] == 2 and out["errors"] == 0
    assert [t["success"] for t in out["tasks"]] == [True, False, True]
    assert out["consolidation"]["added"] + out["consolidation"]["conflicts"] == 3
    assert out["tasks"][1]["judgment"]["failure_mode"] == "missing-answer-terms"


def test_packs_round_trip_and_reimport_is_a_no_op(tmp_path):
    assert "starter" in shipped_packs()
    run = CliRunner()
    starter = ["pack", "import", "starter", "--memory", str(tmp_path / "a"), "--json"]
    first = json.loads(run.invoke(main, starter).stdout)
    assert len(first["added"]) == 8 and first["skipped"] == []
    again = json.loads(run.invoke(main, starter).stdout)
    assert again["added"] == [] and sorted(again["skipped"]) == sorted(first["added"])
    out = tmp_path / "p.jsonl"
    res = run.invoke(main, ["pack", "export", str(out), "--kind", "AntiPattern", "--memory", str(tmp_path / "a"),
                            "--json"])
    assert json.loads(res.stdout)["items"] == 3
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert all(x["provenance"] == {"source": "pack", "pack": "starter", "exported_in": "p"}  # from, and now in
               and x["kind"] == "AntiPattern" for x in lines)
    copy = json.loads(run.invoke(main, ["pack", "import", str(out), "--memory", str(tmp_path / "b"), "--json"]).stdout)
    assert sorted(copy["added"]) == sorted(x["memory_id"] for x in lines)  # stable ids survive the round trip
    with Memory(tmp_path / "b") as m:
        item = m.get(lines[0]["memory_id"])
        assert list(item.failure_modes) == lines[0]["failure_modes"] and m.validate().conforms
    res = run.invoke(main, ["pack", "export", str(tmp_path / "none.jsonl"), "--source", "extracted", "--memory",
                            str(tmp_path / "a"), "--json"])
    assert json.loads(res.stdout)["items"] == 0


def test_a_tampered_pack_line_is_refused_and_nothing_is_written(tmp_path):
    line = json.loads((PACKS / "starter.jsonl").read_text(encoding="utf-8").splitlines()[0])
    line["title"] = "Edited title but the same id"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(line) + "\n", encoding="utf-8")
    res = CliRunner().invoke(main, ["pack", "import", str(bad), "--memory", str(tmp_path / "m")])
    assert res.exit_code == 2 and "is not the item's stable id" in res.output
    with Memory(tmp_path / "m") as m:
        assert len(m) == 0


@pytest.mark.slow
def test_done_when_from_the_readme_train_figures_export_provenance(tmp_path):
    """The issue's closing check, run as the README gives it: train, per-run figures, export, SPARQL provenance."""
    import pyshacl
    from rdflib import Graph

    from owl_memory.provenance import FAILED_RUN_ITEMS, UNTRACED_ITEMS
    from owl_memory.resources import memory_shapes

    section = README.read_text(encoding="utf-8").split("### Check the loop from a fresh clone", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    shutil.copytree(README.parent / "experiments", tmp_path / "experiments")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("OPENAI_API_KEY", None)
    done = subprocess.run(["bash", "-e", "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    assert done.stdout.rstrip().endswith("0 items without their run and trajectory")
    out = json.loads((tmp_path / "runs" / "train.json").read_text(encoding="utf-8"))
    assert out["ran"] == len(COURSE.train) == 11 and out["errors"] == 0
    for t in out["tasks"]:  # the per-run figures are the counts of the per-run report, and each run stored one
        assert t["figures"] == {k: len(v) for k, v in t["consolidation"].items()} and sum(t["figures"].values())
        assert f"{t['id']} {t['figures']}" in done.stdout
    assert {k: sum(t["figures"][k] for t in out["tasks"]) for k in out["consolidation"]} == out["consolidation"]
    g = Graph().parse(tmp_path / "runs" / "learned.ttl")
    failed = {(str(r.item), str(r.run)) for r in g.query(FAILED_RUN_ITEMS)}
    used = {(f"http://w3id.org/owl-memory/item/{u['memory_id']}", f"http://w3id.org/owl-memory/run/{t['run_id']}")
            for t in out["tasks"] for u in t["memories_used"]}
    assert failed == used and used  # every run failed (the stand-in answers nothing), later ones used earlier items
    assert len(g.query("PREFIX om: <http://w3id.org/owl-memory#> SELECT ?i { ?i om:contentRef ?c }")) == out["items"]
    assert list(g.query(UNTRACED_ITEMS)) == []  # every item traces back to its run and that run's trajectory
    conforms, _, text = pyshacl.validate(g, shacl_graph=memory_shapes(), inference="none")
    assert conforms, text[:2000]


def test_pack_export_min_confidence_keeps_only_confident_items(tmp_path):
    from owl_memory import ItemSpec

    with Memory(tmp_path / "m") as m:
        sure = m.add(ItemSpec("Principle", "A sure rule", "Use when sure.", "x", confidence=0.9))
        m.add(ItemSpec("Principle", "A guess", "Use when guessing.", "y", confidence=0.3))
    out = tmp_path / "p.jsonl"
    res = CliRunner().invoke(main, ["pack", "export", str(out), "--min-confidence", "0.5", "--memory",
                                    str(tmp_path / "m"), "--json"])
    assert json.loads(res.stdout)["items"] == 1
    assert [json.loads(x)["memory_id"] for x in out.read_text().splitlines()] == [sure]


def test_train_shows_a_progress_bar_on_a_terminal_and_keeps_stdout_json(tmp_path):
    env = {**os.environ, "FORCE_COLOR": "1", "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["owl-memory", "train", str(shipped_curriculum()), "--lm", "scripted", "--limit", "2",
                           "--memory", str(tmp_path / "m"), "--json"], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "lib-hierarchy-01 (1/2)" in done.stderr and "2/2" in done.stderr and "━" in done.stderr  # the bar
    assert json.loads(done.stdout)["ran"] == 2  # the bar goes to stderr, the JSON to stdout


def test_a_gold_that_answers_nothing_is_flagged_and_teaches_nothing(tmp_path, monkeypatch):
    """A typo'd class in --expect-sparql: the gold returns no rows, so the agent's "unknown" is judged no answer
    (not a success), stderr says why, exit 1, and memory gains no item from the run."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    typo = PREFIXES + "SELECT ?x WHERE { ?x rdfs:subClassOf lib:Wrok }"
    with ScriptedServer(agent("?x rdfs:subClassOf lib:Wrok", "'unknown'")) as server:
        res = cli(["run", "Direct subclasses of lib:Wrok?", "--ontology", str(COURSE.ontology_path),
                   "--expect-sparql", typo, "--learn", "--memory", str(tmp_path / "m"), "--json"], server)
    assert res.exit_code == 1, res.output
    out = json.loads(res.stdout)
    assert not out["judgment"]["success"] and out["judgment"]["failure_mode"] == "empty-gold"
    assert out["extracted"] == [] and "returned no rows" in res.stderr and "expect.empty" in res.stderr
    with Memory(tmp_path / "m") as m:
        assert len(m) == 0
