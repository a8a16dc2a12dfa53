"""The agentic sprint through the real dspy path (a scripted LM, no model): a scripted agent builds sprint 1 with the
construction tools alone, the built graph is checked independently, the rerun takes compiled operators from memory,
hostile code gets "[Error]" observations and changes nothing; the CLI and the provider path; --lm costs."""

import json
import os
import shutil
from pathlib import Path

import pyshacl
import pytest
import yaml
from click.testing import CliRunner
from dspy.utils import DummyLM
from rdflib import Graph
from test_provider import ScriptedServer, action

from owl_memory.agent.trajectory import read_trajectory
from owl_memory.cli import main
from owl_memory.construction.proposer import SymbolicProposer
from owl_memory.construction.sprint import run_sprint
from owl_memory.construction.workspace import graph_text
from owl_memory.llm.agent_sprint import run_agentic_sprint
from owl_memory.llm.construction_script import REPAIR
from owl_memory.model import Construction, Event, Iteration, RunComplete, ToolCall, ToolResult

ROOT = Path(__file__).resolve().parents[1]
SPRINT1 = ROOT / "experiments" / "sprint1" / "sprint.yaml"
HASH = "z" + "0" * 64
ANSWERS = {  # what a model would write for each CQ: only what the question asks; repair adds what the shapes need
    "cq1-knowledge-graph": f'ex:kg1 a kf:KnowledgeGraph ; kf:hasCanonicalHash "{HASH}" ; kf:hasStatus "active" ; '
                           'kf:hasRole "main" .',
    "cq2-dataset": f'ex:ds1 a kf:KnowledgeDataset ; kf:hasDatasetHash "{HASH}" ; kf:hasCanonicalHash "{HASH}" ; '
                   'kf:hasStatus "active" ; kf:hasMember ex:kg1 .',
    "cq3-service": 'ex:svc1 a kf:ServiceRegistration ; kf:hasCapability "SPARQL.Query" .',
    "cq4-credential": "ex:vc1 a kf:VerifiableCredential ; kf:attestsIntegrity ex:kg1 .",
    "cq5-profile": 'ex:prof1 a prof:Profile ; dct:title "Profile one" ; dct:description "A profile of the knowledge '
                   'fabric core" ; prof:hasToken "kf/v1.0.0" ; owl:versionInfo "1.0.0" ; dct:publisher ex:org1 ; '
                   "dct:license <https://creativecommons.org/licenses/by/4.0/> ; prof:hasResource ex:res1 , ex:res2 .",
}
ANSWER = f"""answers = {ANSWERS!r}
for cq in cq_status()['cqs']:
    if cq['passed']:
        continue
    found = repair_candidates(cq['signature'])
    offered = found['candidates'] if isinstance(found, dict) else []
    if offered:
        print(cq['id'], 'from memory:', repair_apply(offered[0]['id'])['verified'])
    else:
        print(cq['id'], 'written:', workspace_apply(answers[cq['id']])['added'])"""
STEPS = [
    {"reasoning": "See what the CQs ask and what I may write.", "code": "print(cq_status())\nprint(workspace_stats())"},
    {"reasoning": "Answer each failing CQ: from memory when it holds an answer, else with my triples.", "code": ANSWER},
    {"reasoning": "Verify, then repair each signature with the candidates offered.", "code": REPAIR + "print(check)"},
    {"reasoning": "Everything passes.", "code": "status = cq_status()\nSUBMIT(answer=f\"{status['passed']} CQs\")"},
]


@pytest.fixture
def no_symbolic_proposer(monkeypatch):
    """The symbolic proposer fails the test if anything asks it."""
    def refuse(*args, **kwargs):
        raise AssertionError("the agentic sprint must not use the symbolic proposer")

    monkeypatch.setattr(SymbolicProposer, "propose", refuse)
    monkeypatch.setattr(SymbolicProposer, "propose_for_violations", refuse)


def independently_checked(path: Path) -> tuple[bool, list[bool]]:
    """(conforms, each CQ's answer) for a built graph, read fresh and checked with pySHACL and rdflib directly."""
    data = Graph().parse(path, format="turtle")
    shapes = Graph().parse(SPRINT1.parent / "shapes.ttl", format="turtle")
    conforms = pyshacl.validate(data, shacl_graph=shapes, advanced=True)[0]
    spec = yaml.safe_load((SPRINT1.parent / "cqs.yaml").read_text())
    head = "".join(f"PREFIX {p}: <{ns}>\n" for p, ns in spec["prefixes"].items())
    return conforms, [bool(data.query(head + cq["query"]).askAnswer) for cq in spec["cqs"]]


def tools_called(events: list[Event]) -> list[str]:
    """The tools a trajectory's tool_call events name, in order."""
    return [e.tool for e in events if isinstance(e, ToolCall)]


def test_a_scripted_agent_builds_sprint1_with_the_tools_alone_and_the_rerun_uses_memory(memory, tmp_path,
                                                                                       no_symbolic_proposer):
    first = run_agentic_sprint(SPRINT1, memory, lm=DummyLM(list(STEPS)), out=tmp_path / "built.ttl")
    assert first.succeeded and first.status == "ok" and first.out == str(tmp_path / "built.ttl")
    assert independently_checked(tmp_path / "built.ttl") == (True, [True] * 5)
    assert first.counts.compiled_used == 0 and first.counts.repairs_verified > 0 and first.compiled_new > 0
    events = read_trajectory(first.trajectory)  # every line validates against schemas/trajectory.schema.json
    iterations = [e for e in events if isinstance(e, Iteration)]
    assert [e.code for e in iterations] == [s["code"] for s in STEPS] and all(e.reasoning for e in iterations)
    assert {"workspace_apply", "workspace_verify", "repair_candidates", "repair_apply"} <= set(tools_called(events))
    assert sum(isinstance(e, Construction) for e in events) == sum(isinstance(e, ToolResult) and not e.error
                                                                   and e.tool in CONSTRUCTION for e in events)
    summary = json.loads(Path(first.summary).read_text())
    assert summary == json.loads(json.dumps(first.to_dict())) and summary["metrics"]["lm_calls"] == 4
    assert {"verify_runs", "deltas_applied", "deltas_undone", "cqs", "conforms", "metrics"} <= set(summary)
    episode = memory.get(first.episode)
    assert episode.kind == "Episode" and any(first.run in r for r in episode.runs)
    compiled = memory.sparql("PREFIX om: <http://w3id.org/owl-memory#> PREFIX prov: <http://www.w3.org/ns/prov#> "
                             "SELECT ?item WHERE { ?item a om:RepairOperator ; prov:wasGeneratedBy ?run }").rows
    assert len(compiled) >= first.compiled_new + 5  # the repairs it compiled and the five CQ answers
    runs = memory.sparql("PREFIX om: <http://w3id.org/owl-memory#> SELECT ?ok WHERE { ?j a om:Judgment ; "
                         "om:success ?ok }").rows
    assert len(runs) == 1 and str(runs[0][0]).lower() == "true"

    second = run_agentic_sprint(SPRINT1, memory, lm=DummyLM(list(STEPS)), out=tmp_path / "again.ttl")
    assert second.succeeded and second.counts.compiled_used >= 5 and second.counts.compiled_verified >= 5
    assert second.counts.verify_runs < first.counts.verify_runs, (first.counts, second.counts)
    offered = [c for e in read_trajectory(second.trajectory) if isinstance(e, Construction)
               and e.tool == "repair_candidates" for c in e.result["candidates"]]
    assert offered and all(c["source"] == "memory" for c in offered)
    assert graph_text(Graph().parse(tmp_path / "again.ttl")) == graph_text(Graph().parse(tmp_path / "built.ttl"))


CONSTRUCTION = {"cq_status", "cq_check", "workspace_stats", "workspace_apply", "workspace_verify",
                "repair_candidates", "repair_apply", "workspace_undo"}


def test_new_cqs_on_the_same_shapes_take_compiled_repairs_from_repair_candidates(memory, tmp_path):
    run_agentic_sprint(SPRINT1, memory, lm=DummyLM(list(STEPS)))
    folder = tmp_path / "variant"
    folder.mkdir()
    (folder / "cqs.yaml").write_text((SPRINT1.parent / "cqs.yaml").read_text().replace("vc1", "vc2"))
    text = SPRINT1.read_text().replace("vocabulary.ttl", str(SPRINT1.parent / "vocabulary.ttl"))
    (folder / "sprint.yaml").write_text(text.replace("shapes.ttl", str(SPRINT1.parent / "shapes.ttl")))
    steps = [dict(s, code=s["code"].replace("vc1", "vc2")) for s in STEPS]
    variant = run_agentic_sprint(folder / "sprint.yaml", memory, lm=DummyLM(steps))
    assert variant.succeeded
    offered = [c for e in read_trajectory(variant.trajectory) if isinstance(e, Construction)
               and e.tool == "repair_candidates" for c in e.result["candidates"][:1]]
    repairs = [c for c in offered if c["operator"] != "apply_delta"]
    assert repairs and all(c["source"] == "memory" for c in repairs)  # compiled decisions come first
    assert variant.counts.compiled_verified > 4  # four CQ answers and at least one compiled repair


HOSTILE = """print(workspace_apply('', removed='kf:KnowledgeGraph a owl:Class .'))
print(workspace_apply('', 'ex:kg1 a kf:KnowledgeGraph .'))
print(workspace_apply('ex:kg1 kf:hasStatus "' + 'x' * 5_000_000 + '" .'))
print(ontology_query('SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }'))
print(workspace_undo('sha256:' + '0' * 64))
print(workspace_apply('ex:kg1 kf:hasStatus "active" ; ; .'))
print(workspace_apply('ex:kg1 kf:hasMember [ a kf:KnowledgeGraph ] .'))
print(repair_candidates('MinCountConstraintComponent|nowhere|-|none'))"""


def test_hostile_agent_code_gets_errors_and_the_workspace_is_unchanged(memory):
    add = f"print(workspace_apply({ANSWERS['cq1-knowledge-graph']!r}))"
    steps = [{"reasoning": "Add the knowledge graph.", "code": add},
             {"reasoning": "Try everything that should be refused.", "code": HOSTILE},
             {"reasoning": "Stop.", "code": "SUBMIT(answer='done')"}]
    result = run_agentic_sprint(SPRINT1, memory, lm=DummyLM(steps))
    events = read_trajectory(result.trajectory)
    hostile = [e for e in events if isinstance(e, ToolResult) and (e.iteration or 0) >= 1]
    assert len(hostile) == 8 and all(e.error and e.message and e.message.startswith("[Error]") for e in hostile)
    assert all(len(e.message or "") <= 300 for e in hostile)
    assert "x" * 200 not in json.dumps([e.to_dict() for e in events])
    huge = max((e.args.keyword["added"] for e in events if isinstance(e, ToolCall)
                and isinstance(e.args.keyword.get("added"), dict)), key=lambda a: a["chars"])
    assert huge["chars"] > 5_000_000 and len(huge["clipped"]) <= 120  # the trajectory shows it clipped
    assert result.counts.deltas_applied == 1 and result.counts.refused >= 2 and result.versions == 2
    assert result.cqs_passed == 1 and result.triples_added == 4
    assert Path(result.trajectory).stat().st_size < 200_000  # the 5 MB argument is clipped in the trajectory


def test_cli_agentic_sprint_through_a_provider_writes_built_ttl_and_counts_tokens(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    args = ["sprint", str(SPRINT1), "--agent", "--lm", "openai/replay", "--memory", str(tmp_path / "mem"), "--json"]
    runs = []
    for name in ("built.ttl", "again.ttl"):
        with ScriptedServer([action(s["reasoning"], s["code"]) for s in STEPS]) as server:
            res = CliRunner().invoke(main, [*args, "--api-base", server.base, "--out", str(tmp_path / name)])
        assert res.exit_code == 0, res.output
        runs.append(json.loads(res.stdout))
    first, second = runs
    assert first["metrics"]["lm_calls"] == 4 and first["metrics"]["prompt_tokens"] == 400
    assert first["metrics"]["completion_tokens"] == 40 and first["cqs_passed"] == 5 and first["conforms"]
    assert independently_checked(tmp_path / "built.ttl") == (True, [True] * 5)
    assert second["compiled_used"] >= 5 and second["verify_runs"] < first["verify_runs"]
    end = read_trajectory(first["trajectory"])[-1]
    assert Path(first["summary"]).is_file() and isinstance(end, RunComplete) and end.status == "ok"


def test_cli_agentic_sprint_with_the_scripted_stand_in(tmp_path):
    runner, mem = CliRunner(), str(tmp_path / "mem")
    agent = ["sprint", str(SPRINT1), "--agent", "--lm", "scripted", "--memory", mem, "--out", str(tmp_path / "b.ttl")]
    fresh = runner.invoke(main, agent)
    assert fresh.exit_code == 1 and "0/5 CQs" in fresh.stdout  # it invents nothing
    assert runner.invoke(main, ["sprint", str(SPRINT1), "--memory", mem]).exit_code == 0
    again = runner.invoke(main, [*agent, "--json"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["compiled_used"] == 5
    assert independently_checked(tmp_path / "b.ttl") == (True, [True] * 5)
    none = runner.invoke(main, ["sprint", str(SPRINT1), "--agent", "--memory", mem], env={"OWL_MEMORY_LM": ""})
    assert none.exit_code == 2 and "--lm" in none.output
    bad_out = runner.invoke(main, [*agent[:-2], "--out", str(tmp_path / "no" / "b.ttl")])
    assert bad_out.exit_code == 2 and "does not exist" in bad_out.output
    symbolic_iters = runner.invoke(main, ["sprint", str(SPRINT1), "--max-iters", "3", "--memory", mem])
    assert symbolic_iters.exit_code == 2 and "--agent" in symbolic_iters.output


def test_a_failing_lm_is_reported_with_what_was_built(memory):
    result = run_agentic_sprint(SPRINT1, memory, lm=DummyLM([STEPS[0]]), max_iters=3)
    assert result.status == "error" and result.error and not result.succeeded
    assert Path(result.summary).is_file() and result.metrics.lm_calls >= 2
    assert json.loads(Path(result.summary).read_text())["error"] == result.error


def test_symbolic_sprint_out_keeps_the_input_prefixes(memory, tmp_path):
    result = run_sprint(SPRINT1, memory, out=tmp_path / "built.ttl")
    text = (tmp_path / "built.ttl").read_text()
    assert result.out == str(tmp_path / "built.ttl") and "@prefix dct: <http://purl.org/dc/terms/>" in text
    assert "@prefix kf: " in text and independently_checked(tmp_path / "built.ttl") == (True, [True] * 5)


def test_sprint_lm_records_tokens_and_leakage(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    read = "h = ontology_query('SELECT ?c ?l WHERE { ?c rdfs:comment ?l }')\nprint(results_peek(h['handle'], 3))"
    submit = "SUBMIT(turtle='ex:vc1 a kf:VerifiableCredential ; kf:attestsIntegrity ex:kg1 .')"
    with ScriptedServer([action("Read comments.", read), action("Answer.", submit)]) as server:
        res = CliRunner().invoke(main, ["sprint", str(SPRINT1), "--lm", "openai/replay", "--api-base", server.base,
                                        "--memory", str(tmp_path / "mem"), "--json"])
    assert res.exit_code == 0, res.output
    m = json.loads(res.stdout)["metrics"]
    assert m["lm_calls"] >= 2 and m["prompt_tokens"] == 100 * m["lm_calls"]
    assert m["payload_chars_in_history"] > 0 and m["payload_chars_by_source"]["results"] > 0


def test_repair_lm_records_tokens_and_leakage(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    (tmp_path / "shapes.ttl").write_text(
        "@prefix ex: <http://example.org/> . @prefix sh: <http://www.w3.org/ns/shacl#> .\n"
        "ex:PartShape a sh:NodeShape ; sh:targetClass ex:Part ; sh:property [ sh:path ex:code ; sh:minCount 1 ; "
        'sh:pattern "^(?=.*[0-9])(?=.*[A-Z])[A-Z0-9]{6}$" ] .\n')
    (tmp_path / "data.ttl").write_text('@prefix ex: <http://example.org/> .\nex:p1 a ex:Part ; ex:code "abc" ; '
                                       'ex:note "a note long enough to be seen as payload when printed" .\n')
    read = "h = ontology_query('SELECT ?n WHERE { ?s <http://example.org/note> ?n }')\nprint(results_peek(h['handle']))"
    swap = "SUBMIT(added='ex:p1 ex:code \"AB12CD\" .', removed='ex:p1 ex:code \"abc\" .')"
    with ScriptedServer([action("Read.", read), action("Swap the code.", swap)]) as server:
        res = CliRunner().invoke(main, ["repair", str(tmp_path / "data.ttl"), "--shapes", str(tmp_path / "shapes.ttl"),
                                        "--lm", "openai/replay", "--api-base", server.base,
                                        "--memory", str(tmp_path / "mem"), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["lm_calls"] == 2 and out["metrics"]["lm_calls"] == 2 and out["metrics"]["prompt_tokens"] == 200
    assert out["metrics"]["payload_chars_by_source"]["results"] > 0


def test_a_sprint_name_that_climbs_folders_writes_inside_the_memorys_runs(tmp_path):
    """A sprint named `../../../../pwn` run with --agent: its trajectory and summary land in <memory>/runs under a
    sanitized name, and nothing is written anywhere above it."""
    deep = tmp_path / "a" / "b" / "c" / "d"
    sprint = deep / "sprint"
    shutil.copytree(SPRINT1.parent, sprint)
    spec = yaml.safe_load((sprint / "sprint.yaml").read_text())
    (sprint / "sprint.yaml").write_text(yaml.safe_dump({**spec, "name": "../../../../pwn"}))
    mem = deep / "mem"
    before = {p for p in tmp_path.rglob("*")}
    done = CliRunner().invoke(main, ["sprint", str(sprint / "sprint.yaml"), "--agent", "--lm", "scripted",
                                     "--memory", str(mem)])
    assert done.exit_code == 1, done.output  # the scripted agent invents nothing on an empty memory
    new = {p for p in tmp_path.rglob("*")} - before
    assert all(p == mem or mem in p.parents for p in new), sorted(str(p) for p in new if mem not in p.parents)
    (folder,) = (mem / "runs").glob("sprint-*")
    assert "pwn" in folder.name and ".." not in folder.name and (folder / "summary.json").is_file()


def test_a_refused_out_creates_no_memory_folder(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for agent in ([], ["--agent", "--lm", "scripted"]):
        done = CliRunner().invoke(main, ["sprint", str(SPRINT1), *agent, "--out", str(fifo),
                                         "--memory", str(tmp_path / "new")])
        assert done.exit_code == 2 and "FIFO" in done.output, done.output
        assert not (tmp_path / "new").exists()
