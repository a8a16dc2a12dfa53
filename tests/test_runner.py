"""The strict-RLM runner: real dspy.RLM, real interpreter, real tools, scripted LM; trajectories validate."""

import json

import dspy
import pytest
from click.testing import CliRunner
from dspy.utils import DummyLM

from owl_memory import ItemSpec
from owl_memory.agent.conditions import CONDITIONS
from owl_memory.agent.runner import interpreter_factory, resolve_lm, run
from owl_memory.agent.trajectory import read_trajectory
from owl_memory.cli import main
from owl_memory.errors import ConfigError
from owl_memory.model import Iteration, MemoryAccess, RunComplete, RunConfig, RunStart, ToolCall
from owl_memory.model.runs import GRANTS

SUBCLASSES = ["http://www.w3.org/ns/prov#Bundle", "http://www.w3.org/ns/prov#Collection",
              "http://www.w3.org/ns/prov#Plan"]
TASK = "What are the direct subclasses of prov:Entity?"
PROMPT = "Answer with full IRIs, sorted, comma-separated. " + "Context the agent must not see in bulk. " * 300


def steps(*codes, answer=None):
    """Scripted RLM actions (reasoning + fenced code) for DummyLM, plus an extract answer when given."""
    out = [{"reasoning": f"step {i + 1}", "code": f"```python\n{c}\n```"} for i, c in enumerate(codes)]
    return out + ([{"answer": answer}] if answer is not None else [])


SUBCLASS_AGENT = steps(
    "print(prompt_stats()['size'])\nrule = prompt_window(0, 48)['text']\nprint(rule)",  # positional call
    "d = ontology_describe(iri='prov:Entity', limit=10)\nsubs = sorted(d['subclasses'])\nprint(subs)",  # keyword
    "q = ontology_query('PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> PREFIX prov: "
    "<http://www.w3.org/ns/prov#> SELECT ?c WHERE { ?c rdfs:subClassOf prov:Entity } ORDER BY ?c')\n"
    "rows = results_peek(q['handle'], 10)['rows']\nprint(q['rows'], [r['c'] for r in rows] == subs)",
    "SUBMIT(answer=', '.join(subs))",
)


@pytest.fixture
def prov(shared_data):
    """Path of the real PROV-O ontology."""
    return shared_data / "ontologies" / "prov-o.ttl"


def test_agent_answers_prov_entity_subclasses_through_the_tools(prov, memory, tmp_path):
    lm = DummyLM(SUBCLASS_AGENT)
    r = run(TASK, memory=memory, prompt=PROMPT, ontology=prov, lm=lm, trajectory_dir=tmp_path)
    assert r.answer.split(", ") == SUBCLASSES
    events = read_trajectory(r.trajectory_path)  # every line validates against the schema
    kinds = [e.kind for e in events]
    assert kinds[0] == "run_start" and kinds[-1] == "run_complete" and kinds.count("iteration") == 4
    assert [e.seq for e in events] == list(range(len(events)))
    outputs = [e.output for e in events if isinstance(e, Iteration)]
    assert outputs[0] == f"{len(PROMPT)}\nAnswer with full IRIs, sorted, comma-separated. " and \
        outputs[2] == "3 True"
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [c.tool for c in calls] == ["prompt_stats", "prompt_window", "ontology_describe", "ontology_query",
                                       "results_peek"]
    code = [e.code for e in events if isinstance(e, Iteration)]
    assert "prompt_window(0, 48)" in code[0] and "ontology_describe(iri='prov:Entity', limit=10)" in code[1]
    assert calls[1].args.keyword == {"start": 0, "length": 48} and calls[2].args.keyword["limit"] == 10
    done = events[-1]
    assert isinstance(done, RunComplete) and done.status == "ok"
    assert done.to_dict()["iterations"] == 4 and done.to_dict()["lm_calls"] == 4
    m = r.metrics
    assert m.tool_calls == 5 and m.tool_errors == 0 and m.large_returns == 0 and m.max_window == 48
    assert m.payload_chars_by_source["prompt"] == 48  # the one printed window, exactly
    assert m.stdout_chars == sum(len(o) for o in outputs)
    assert r.trace_ref and memory.blobs.ref(r.trace_ref).kind == "trace"


def test_prompt_text_never_enters_the_rlm_inputs(prov, tmp_path):
    lm = DummyLM(steps("SUBMIT(answer=str(prompt['size']))"))
    r = run(TASK, prompt=PROMPT, ontology=prov, lm=lm, condition="A0", trajectory_dir=tmp_path)
    assert r.answer == str(len(PROMPT))
    sent = json.dumps(lm.history[0]["messages"])
    assert "must not see" not in sent and "Answer with full IRIs" not in sent
    assert r.metrics.payload_chars_in_history == 0 and r.metrics.payload_chars_sent == 0
    start = read_trajectory(r.trajectory_path)[0]
    assert isinstance(start, RunStart) and start.prompt and start.prompt.size == len(PROMPT)
    assert start.config.condition == "A0"
    assert "memory_search" not in start.config.tools and start.config.interpreter == "LocalInterpreter"


def test_a1_injects_title_summary_and_three_bullets_never_the_rest(memory, tmp_path):
    i = memory.add(ItemSpec("Procedure", "Describe the class to list subclasses",
                            "Use when asked for direct subclasses.",
                            "- call ontology_describe\n- read subclasses\n- sort them\n- FOURTH-BULLET\n" +
                            "PAYLOAD-BODY " * 50, task_types=["subclass-query"]))
    memory.add(ItemSpec("Procedure", "List subclasses by query", "Use when asked for subclasses.", "- query"))
    lm = DummyLM(steps("SUBMIT(answer='ok')"))
    r = run("list the direct subclasses of a class", memory=memory, lm=lm, condition="A1", trajectory_dir=tmp_path)
    user = lm.history[0]["messages"][-1]["content"]
    assert "Describe the class to list subclasses" in user and "Use when asked for direct subclasses." in user
    assert all(f"* {b}" in user for b in ("call ontology_describe", "read subclasses", "sort them"))
    sent = json.dumps(lm.history[0]["messages"])
    assert "FOURTH-BULLET" not in sent and "PAYLOAD-BODY" not in sent
    assert "List subclasses by query" not in sent  # k defaults to 1, as in ReasoningBank
    start = read_trajectory(r.trajectory_path)[0]
    assert r.memory_ids_used == (i,) and isinstance(start, RunStart) and "memory_search" not in start.config.tools
    assert start.memory_ids_injected == (i,)
    lm = DummyLM(steps("SUBMIT(answer='ok')"))
    r = run("list the direct subclasses of a class", memory=memory, lm=lm, condition="A1", k=2,
            trajectory_dir=tmp_path)
    assert "List subclasses by query" in lm.history[0]["messages"][-1]["content"] and len(r.memory_ids_used) == 2


def test_a3_gives_a2_tools_plus_one_hint_of_at_most_300_characters(memory, tmp_path):
    schema = {"operator": "add_subclass", "args": {"parent": "lib:Work", "child": "lib:Novel"}, "pad": "x" * 400}
    i = memory.add(ItemSpec("Procedure", "Add the missing subclass", "Use when a subclass axiom is missing.",
                            "HIDDEN-CONTENT " * 40, action_schema=schema))
    lm = DummyLM(steps("SUBMIT(answer='ok')"))
    r = run("add the missing subclass of Work", memory=memory, lm=lm, condition="A3", trajectory_dir=tmp_path)
    user = lm.history[0]["messages"][-1]["content"]
    hint = user.split("Memory hint: ", 1)[1].split("\n", 1)[0]
    assert hint.startswith("Add the missing subclass") and '"operator":"add_subclass"' in hint
    assert len(hint) <= 300 and hint.endswith("…")
    assert "HIDDEN-CONTENT" not in json.dumps(lm.history[0]["messages"])
    start = read_trajectory(r.trajectory_path)[0]
    assert isinstance(start, RunStart) and "memory_search" in start.config.tools
    assert start.memory_ids_injected == (i,)
    assert r.metrics.payload_chars_in_history == 0


def test_a4_hands_the_model_whole_payloads_and_leakage_shows_it(memory, tmp_path):
    body = "Use initBindings for every user value. " * 100
    memory.add(ItemSpec("Principle", "Bind values never paste", "Use when a query takes user text.", body))
    script = ("hits = memory_search('query user text')\ng = memory_get(hits['items'][0]['id'])\n"
              "print(g.get('content', '')[:3000])", "SUBMIT(answer=g['title'])")
    out = {}
    for cond in ("A2", "A4"):
        lm = DummyLM(steps(*script))
        out[cond] = run("how should a query take user text?", memory=memory, prompt=PROMPT, lm=lm, condition=cond,
                        trajectory_dir=tmp_path)
        out[cond + "sent"] = json.dumps(lm.history[-1]["messages"])
    assert out["A2"].answer == out["A4"].answer == "Bind values never paste"
    assert "Use initBindings for every user value." not in out["A2sent"]
    assert "Use initBindings for every user value." in out["A4sent"]
    assert "Context the agent must not see in bulk." in out["A4sent"]  # the prompt text is in the inputs
    assert out["A2"].metrics.payload_chars_in_history == 0
    a4 = out["A4"].metrics
    assert a4.payload_chars_by_source["prompt"] > 0 and a4.payload_chars_in_history > 3000
    assert a4.large_returns >= 2  # memory_search and memory_get both returned the whole item


def test_a2_memory_is_reached_through_tools_only(memory, tmp_path):
    i = memory.add(ItemSpec("Principle", "Bind values never paste", "Use when a query takes user text.",
                   "Use initBindings. " * 100))
    lm = DummyLM(steps("hits = memory_search('query user text')\nprint([h['id'] for h in hits['items']])",
                       "g = memory_get(hits['items'][0]['id'])\nw = memory_window(g['id'], 0, 17)\n"
                       "print(g['title'], len(w['text']))",
                       "SUBMIT(answer=g['title'])"))
    r = run("how should a query take user text?", memory=memory, lm=lm, trajectory_dir=tmp_path)
    assert r.answer == "Bind values never paste" and r.memory_ids_used == (i,)
    assert "Use initBindings" not in json.dumps(lm.history[0]["messages"])
    assert r.metrics.payload_chars_in_history == 0 and r.metrics.read_chars == 17


def test_max_iters_falls_back_to_extract(tmp_path):
    lm = DummyLM(steps("x = 1", "x += 1", answer="two"))
    r = run("count", lm=lm, max_iters=2, trajectory_dir=tmp_path)
    done = read_trajectory(r.trajectory_path)[-1]
    assert r.answer == "two" and isinstance(done, RunComplete) and done.status == "extracted"
    assert done.to_dict()["lm_calls"] == 3


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_an_lm_failure_is_recorded_then_raised(tmp_path):
    class Broken(DummyLM):
        def forward(self, *a, **kw):
            raise RuntimeError("provider down")

    with pytest.raises(Exception, match="provider down"):
        run("t", lm=Broken([]), trajectory_dir=tmp_path)
    (path,) = tmp_path.glob("*.jsonl")
    done = read_trajectory(path)[-1]
    assert isinstance(done, RunComplete) and done.status == "error" and "provider down" in (done.error or "")


@pytest.mark.parametrize("kwargs,match", [
    ({"condition": "A9"}, "not one of A0, A1, A2"),
    ({"task": "  "}, "the task is empty"),
])
def test_bad_run_input_is_a_config_error(kwargs, match, tmp_path):
    args = {"task": "t", "lm": DummyLM([]), "trajectory_dir": tmp_path} | kwargs
    with pytest.raises(ConfigError, match=match):
        run(**args)


def test_no_lm_names_both_the_option_and_the_variable(monkeypatch):
    monkeypatch.delenv("OWL_MEMORY_LM", raising=False)
    with pytest.raises(ConfigError, match="--lm.*OWL_MEMORY_LM"):
        resolve_lm(None)


def test_lm_strings_and_the_environment_variable(monkeypatch):
    monkeypatch.setenv("OWL_MEMORY_LM", "openai/from-env")
    assert resolve_lm(None).model == "openai/from-env"
    lm = resolve_lm("ollama_chat/llama3", api_base="http://127.0.0.1:9/v1")
    assert isinstance(lm, dspy.LM) and lm.kwargs["api_base"] == "http://127.0.0.1:9/v1"
    with pytest.raises(ConfigError, match="provider/model"):
        resolve_lm("openai/")


def test_sandbox_without_bubblewrap_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(ConfigError, match="apt-get install bubblewrap"):
        interpreter_factory(sandbox=True)
    assert interpreter_factory().__name__ == "LocalInterpreter"


def test_every_condition_is_offered_and_an_unknown_one_refused(tmp_path):
    assert CONDITIONS == ("A0", "A1", "A2", "A3", "A4", "A5") == tuple(GRANTS)
    res = CliRunner().invoke(main, ["run", "a task", "--condition", "A6", "--memory", str(tmp_path / "m")])
    assert res.exit_code == 2 and "'A0', 'A1', 'A2', 'A3', 'A4', 'A5'" in res.output
    with pytest.raises(ConfigError, match="A0, A1, A2, A3, A4, A5"):
        run("a task", lm=DummyLM([]), condition="A6")


def test_cli_run_without_lm_exits_2_naming_both(monkeypatch, tmp_path):
    monkeypatch.delenv("OWL_MEMORY_LM", raising=False)
    res = CliRunner().invoke(main, ["run", "a task", "--memory", str(tmp_path / "m")])
    assert res.exit_code == 2
    assert "--lm" in res.output and "OWL_MEMORY_LM" in res.output
    assert not (tmp_path / "m").exists()


def test_cli_run_help_has_an_example():
    res = CliRunner().invoke(main, ["run", "-h"])
    assert res.exit_code == 0 and "Example:" in res.output and "not a sandbox" in res.output


def test_memory_access_is_derived_once_from_the_condition():
    access = {c: MemoryAccess.of(c, k=3) for c in CONDITIONS}
    assert [c for c, a in access.items() if a.tools] == ["A2", "A3", "A4"]
    a1, a3 = access["A1"], access["A3"]
    assert (a1.injected, a1.text, a3.injected, a3.hint_chars, a3.text) == (3, True, 1, 300, False)
    assert [c for c, a in access.items() if a.uncapped or a.prompt_text] == ["A4"]
    assert not access["A0"].layers_read_memory and all(access[c].layers_read_memory for c in CONDITIONS[1:])
    assert RunConfig(condition="A1", k=2).access == MemoryAccess.of("A1", 2)


@pytest.mark.parametrize("options,match", [
    ({"condtion": "A1"}, "unknown run option.*condtion.*use any of lm"),
    ({"layers": "L2"}, "L2, memory text in the prompt, is condition A1"),
    ({"k": 0}, "k .* must be an integer >= 1"),
])
def test_a_bad_run_option_is_a_config_error_naming_the_fix(options, match):
    with pytest.raises(ConfigError, match=match):
        RunConfig.of(**options)


def test_run_config_read_limits_reach_the_toolbox(tmp_path):
    lm = DummyLM(steps("for i in range(5):\n    print(type(prompt_window(i * 40, 40)).__name__)", "SUBMIT(answer='x')"))
    config = RunConfig(lm=lm, condition="A0", read_budget=100, trajectory_dir=tmp_path)
    r = run("read the prompt", prompt=PROMPT, config=config)
    assert r.metrics.read_chars == 100 and r.metrics.tool_errors == 2
    start = read_trajectory(r.trajectory_path)[0]
    assert isinstance(start, RunStart) and start.config.read_budget == 100
    assert r.to_dict()["metrics"]["read_chars"] == 100 and r.to_dict()["memory_ids_used"] == []
