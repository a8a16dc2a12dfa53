"""The DSPy tool surface: caps whatever the arguments, [Error] observations, both call styles through dspy.RLM."""

import copy
import inspect
import json
import re
import shutil
import subprocess
import sys
import types
import typing
from pathlib import Path

import dspy
import pytest
from dspy.utils import DummyLM

from owl_memory import ItemSpec, MemoryAccess
from owl_memory.adapters.dspy import execution_tools, stub_parameters
from owl_memory.agent.runner import RLM
from owl_memory.agent.tools import LARGE_RETURN, MAX_RETURN, OwlTool, Toolbox, ToolFamily, dumps, family, tools
from owl_memory.errors import OwlMemoryError, ToolError
from owl_memory.model import ToolResult
from owl_memory.store.blobs import BlobStore, ReadBudget

TTL = """@prefix ex: <http://example.org/zoo#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex: a owl:Ontology .
ex:Animal a owl:Class ; rdfs:label "Animal"@en ; rdfs:comment "Anything alive that moves." .
ex:Cat a owl:Class ; rdfs:subClassOf ex:Animal ; rdfs:label "Cat" .
ex:Dog a owl:Class ; rdfs:subClassOf ex:Animal ; rdfs:label "Dog" .
ex:Kitten a owl:Class ; rdfs:subClassOf ex:Cat .
ex:eats a owl:ObjectProperty ; rdfs:domain ex:Animal ; rdfs:range ex:Animal .
ex:name a owl:DatatypeProperty ; rdfs:domain ex:Animal .
"""
PROMPT = "".join(f"line {i:05d} of the hidden prompt; " for i in range(2000))  # ~66 KB


def box(**kw):
    """A toolbox over PROMPT and the zoo ontology, tools by name."""
    tb = Toolbox(None, kw.pop("prompt", PROMPT), kw.pop("ontology", TTL), **kw)
    return tb, {f.__name__: f for f in tb.functions()}


def test_tools_are_dspy_tools_that_keep_name_docstring_and_type_hints():
    _, fns = box()
    for name, fn in fns.items():
        assert isinstance(fn, OwlTool) and isinstance(fn, dspy.Tool) and callable(fn)
        assert fn.name == name and fn.__doc__ == fn.desc and fn.desc and len(fn.__doc__) < 200
        assert "return" in fn.__annotations__ and typing.get_type_hints(fn)["return"] == dict | str
        assert list(inspect.signature(fn).parameters) == list(fn.args)
    assert str(inspect.signature(fns["prompt_window"])) == "(start: 'int' = 0, length: 'int' = 512) -> 'dict | str'"
    assert fns["prompt_window"].args == {"start": {"type": "integer", "default": 0},
                                         "length": {"type": "integer", "default": 512}}
    assert issubclass(ToolError, OwlMemoryError)
    rlm = dspy.RLM("task -> answer", tools=list(fns.values()))
    assert rlm.tools["prompt_window"] is fns["prompt_window"]  # dspy keeps Tool objects as they are
    assert copy.deepcopy(fns["prompt_window"]) is fns["prompt_window"]  # copies share one run's toolbox
    assert set(fns) == {"prompt_stats", "prompt_window", "prompt_find", "handle_window", "ontology_stats",
                        "ontology_classes", "ontology_properties", "ontology_describe", "ontology_sample",
                        "ontology_query", "results_peek"}


def test_a_tool_family_is_one_registered_class_held_to_the_same_caps(monkeypatch):
    from owl_memory.agent.tools import toolbox

    monkeypatch.setattr(toolbox, "FAMILIES", list(toolbox.FAMILIES))

    @family
    class EchoTools(ToolFamily):
        order = 35
        names = ("echo_length",)

        def echo_length(self, text: str) -> dict | str:
            """The length of `text`, padded past the return cap."""
            return {"chars": len(text), "pad": "x" * 5000}

    _, f = box()
    assert list(f).index("echo_length") == list(f).index("ontology_query") + 1
    out = f["echo_length"]("abc")
    assert out["chars"] == 3 and out["truncated"] is True and len(dumps(out)) <= MAX_RETURN
    assert f["echo_length"](5).startswith("[Error] echo_length(text: str): argument 'text' has the wrong type")
    assert "echo_length" in {t.name for t in Toolbox().functions()}  # registered once, offered by every toolbox


def test_public_tools_function_includes_memory_tools(memory):
    names = [f.__name__ for f in tools(memory, prompt="abc", ontology=TTL)]
    assert {"memory_search", "memory_get", "memory_window"} <= set(names)


def test_prompt_window_positional_and_keyword_agree_and_are_capped():
    tb, f = box()
    a, b = f["prompt_window"](10, 20), f["prompt_window"](start=10, length=20)
    assert (a["budget_left"], b["budget_left"]) == (19980, 19960) and a | {"budget_left": 19960} == b
    w = f["prompt_window"](0, 10**9)
    assert len(w["text"]) == 512 and w["end"] == 512 and w["size"] == len(PROMPT)
    assert PROMPT[:512] == w["text"]


def test_prompt_find_returns_offsets_never_text():
    _, f = box()
    out = f["prompt_find"]("line 01234 ")
    assert out["offsets"] == [PROMPT.index("line 01234 ")]
    assert "hidden" not in dumps(out)
    many = f["prompt_find"]("hidden", 10**6)
    assert many["count"] == 50 and many["more"] is True


def test_budget_runs_out_with_an_error_string():
    _, f = box(budget=ReadBudget(total_chars=1000))
    got = [f["prompt_window"](i * 512, 512) for i in range(4)]
    assert [len(g["text"]) for g in got[:2]] == [512, 488]
    assert isinstance(got[3], str) and got[3].startswith("[Error] prompt_window:") and "budget" in got[3]


def test_reads_per_handle_cap():
    _, f = box(budget=ReadBudget(reads_per_handle=3))
    outs = [f["prompt_window"](i, 1) for i in range(4)]
    assert outs[3].startswith("[Error]") and "search for what you need" in outs[3]


@pytest.mark.parametrize("name,args", [
    ("prompt_window", (0, 10**12)), ("prompt_window", (-5, -5)), ("prompt_find", ("line", 10**9)),
    ("ontology_classes", (10**9, 0)), ("ontology_properties", (10**9, -3)), ("ontology_describe", ("ex:Animal", 10**9)),
    ("results_peek", (None, 10**9, 0)), ("handle_window", (None, 0, 10**9)), ("prompt_stats", ()),
    ("ontology_stats", ()),
])
def test_every_return_is_capped_whatever_the_arguments(name, args):
    tb, f = box()
    handle = f["ontology_query"]("SELECT ?s ?p ?o WHERE { ?s ?p ?o }")["handle"]
    args = tuple(handle if a is None else a for a in args)
    out = f[name](*args)
    assert len(dumps(out)) <= MAX_RETURN
    json.loads(dumps(out))  # JSON-compatible


def test_fit_trims_window_text_that_escapes_beyond_the_cap():
    tb, f = box(prompt="\x01" * 2000)
    out = f["prompt_window"](0, 512)
    assert len(dumps(out)) <= MAX_RETURN and out["truncated"] is True and out["end"] == len(out["text"])


@pytest.mark.parametrize("call,expect", [
    (lambda f: f["prompt_window"]("x"), "start must be an integer"),
    (lambda f: f["prompt_window"](1, 2, 3), "too many positional arguments"),
    (lambda f: f["prompt_find"](""), "pattern is empty"),
    (lambda f: f["ontology_describe"]("ex:Unicorn"), "is not in the ontology"),
    (lambda f: f["ontology_describe"]("http://nowhere.example/x"), "ontology_classes()"),
    (lambda f: f["ontology_query"]("SELECT ?x WHERE { ?x"), "fix the SPARQL"),
    (lambda f: f["ontology_query"]("SELECT * WHERE { SERVICE <http://x.org/> { ?s ?p ?o } }"), "SERVICE is not"),
    (lambda f: f["ontology_query"]("INSERT DATA { <a:b> <a:c> <a:d> }"), "not allowed"),
    (lambda f: f["results_peek"]("sha256:nope"), "unknown results handle"),
    (lambda f: f["handle_window"]("sha256:" + "0" * 64), "use a handle a tool returned"),
    (lambda f: f["prompt_find"]("x" * 10_000), "the limit is"),
])
def test_recoverable_failures_are_error_strings_that_say_what_to_do(call, expect):
    _, f = box()
    out = call(f)
    assert isinstance(out, str) and out.startswith("[Error]") and expect in out


def test_error_messages_never_echo_long_arguments():
    _, f = box()
    secret = "SECRET-" + "q" * 60
    out = f["ontology_describe"](secret)
    assert out.startswith("[Error]") and "qqqqqqqqqqqqqqqq" not in out and "<argument>" in out


def test_no_prompt_and_no_ontology_are_error_strings():
    tb = Toolbox(None, None, None)
    f = {fn.__name__: fn for fn in tb.functions()}
    assert "no prompt" in f["prompt_window"](0, 5)
    assert "no ontology" in f["ontology_classes"]()


def test_memory_tools_called_as_methods_without_a_memory_say_so():
    """A toolbox without a memory offers no memory tools; calling one by its method is a ToolError, not a crash."""
    tb = Toolbox(None, "p", None)
    assert not {"memory_search", "files_list"} & {fn.__name__ for fn in tb.functions()}
    for call in (lambda: tb.memory_search("x"), lambda: tb.memory_get("0" * 16), lambda: tb.files_list()):
        with pytest.raises(ToolError, match="this run has no memory"):
            call()


def test_ontology_tools_on_a_small_graph():
    _, f = box()
    stats = f["ontology_stats"]()
    assert stats["classes"] == 4 and stats["properties"] == 2 and stats["ontology"] == ["http://example.org/zoo#"]
    assert [c["iri"].split("#")[1] for c in f["ontology_classes"](2, 1)["classes"]] == ["Cat", "Dog"]
    d = f["ontology_describe"]("ex:Animal")
    assert d["subclasses"] == ["http://example.org/zoo#Cat", "http://example.org/zoo#Dog"]
    assert d["label"] == "Animal" and d["comment"] == "Anything alive that moves."
    assert set(d["properties_with_domain"]) == {"http://example.org/zoo#eats", "http://example.org/zoo#name"}
    kinds = {p["iri"].split("#")[1]: p["kind"] for p in f["ontology_properties"]()["properties"]}
    assert kinds == {"eats": "object", "name": "datatype"}


def test_query_returns_handle_and_count_and_peek_pages_rows():
    tb, f = box()
    q = f["ontology_query"]("PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> "
                            "SELECT ?c WHERE { ?c rdfs:subClassOf+ <http://example.org/zoo#Animal> } ORDER BY ?c")
    assert q["rows"] == 3 and q["columns"] == ["c"] and "Cat" not in dumps(q)
    first = f["results_peek"](q["handle"], 2)
    assert [r["c"][-3:] for r in first["rows"]] == ["Cat", "Dog"] and first["next"] == 2
    rest = f["results_peek"](handle=q["handle"], n=5, offset=first["next"])
    assert [r["c"][-6:] for r in rest["rows"]] == ["Kitten"] and rest["next"] is None
    assert f["ontology_query"]("ASK { <http://example.org/zoo#Cat> ?p ?o }") == {"ask": True}


def test_peek_gives_twenty_rows_by_default_and_fifty_at_most():
    numbers = "".join(f'ex:n{i} rdfs:label "{i % 10}" .\n' for i in range(80))
    _, f = box(ontology=TTL + numbers)
    q = f["ontology_query"]("PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> "
                            "SELECT ?n WHERE { ?s rdfs:label ?n FILTER(STRLEN(?n) = 1) }")
    assert q["rows"] == 80
    assert len(f["results_peek"](q["handle"])["rows"]) == 20
    most = f["results_peek"](q["handle"], 500)
    assert 20 < len(most["rows"]) <= 50  # more than the old cap of 20, within the 512-character read
    assert most["next"] == len(most["rows"]) and len(dumps(most)) <= 2_000


def test_sample_spreads_through_the_data_and_follows_a_class():
    people = "".join(f"ex:p{i:02d} a ex:Cat ; ex:name \"cat {i}\" .\n" for i in range(30))
    _, f = box(ontology=TTL + people + "ex:rex a ex:Dog .\n")
    sample = f["ontology_sample"](4)
    assert sample["total"] == 61 and len(sample["triples"]) == 4
    assert len({t["s"] for t in sample["triples"]}) > 1  # spread, not the first subject's triples
    assert f["ontology_sample"](4) == sample  # the same sample every time
    dogs = f["ontology_sample"](10, of="ex:Dog")
    assert dogs["of"] == "http://example.org/zoo#Dog" and [t["s"][-3:] for t in dogs["triples"]] == ["rex"]
    assert all(t["s"].split("#")[1] not in ("Cat", "Animal", "eats") for t in sample["triples"])  # no declarations
    assert f["ontology_sample"](3, of="ex:Unicorn").startswith("[Error]")


def test_uncapped_toolbox_returns_all_rows_and_whole_items_beyond_the_cap(memory):
    big = "".join(f"ex:C{i} a owl:Class ; rdfs:subClassOf ex:Animal .\n" for i in range(300))
    tb, f = box(ontology=TTL + big, access=MemoryAccess.of("A4"))
    q = f["ontology_query"]("PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> "
                            "SELECT ?c WHERE { ?c rdfs:subClassOf <http://example.org/zoo#Animal> }")
    assert q["rows"] == 302 and len(q["all_rows"]) == 302 and len(dumps(q)) > MAX_RETURN
    assert tb.stats.large_returns == 1
    capped = box(ontology=TTL + big)[1]["ontology_query"]("SELECT ?s WHERE { ?s ?p ?o }")
    assert "all_rows" not in capped and len(dumps(capped)) <= MAX_RETURN
    i = memory.add(ItemSpec("Principle", "Bind values", "Use when a query takes user text.", "BODY " * 1000))
    tb = Toolbox(memory, access=MemoryAccess.of("A4"))
    f = {t.__name__: t for t in tb.functions()}
    assert f["memory_get"](i)["content"] == "BODY " * 1000
    assert f["memory_search"]("user text")["items"][0]["content"] == "BODY " * 1000
    assert [r.kind for r in tb.payloads] == ["content"]  # the content is watched for leakage


def test_results_peek_shows_a_partial_row_when_one_row_exceeds_a_read():
    long = "x" * 3000
    tb, f = box(ontology=TTL + f'ex:Cat rdfs:seeAlso "{long}" .\n')
    q = f["ontology_query"]("SELECT ?v WHERE { ?s <http://www.w3.org/2000/01/rdf-schema#seeAlso> ?v }")
    out = f["results_peek"](q["handle"], 1)
    assert out["rows"] == [] and len(out["partial_row"]) == 512 and out["next"] is None


def test_stats_and_observer_record_sizes_and_handles_not_payload():
    events = []
    tb, f = box(observer=events.append)
    q = f["ontology_query"]("SELECT ?s WHERE { ?s a <http://www.w3.org/2002/07/owl#Class> }")
    f["prompt_window"](0, 512)
    f["prompt_window"]("bad")
    assert [e.kind for e in events] == ["tool_call", "agent_query", "tool_result"] + ["tool_call", "tool_result"] * 2
    assert events[1].sparql == "SELECT ?s WHERE { ?s a <http://www.w3.org/2002/07/owl#Class> }"  # the model's own
    assert events[1].handle == q["handle"] and events[1].rows == q["rows"] and events[1].source == "ontology"
    assert isinstance(events[2], ToolResult) and events[2].handles == (q["handle"],)
    assert "hidden prompt" not in json.dumps([e.to_dict() for e in events])
    assert tb.stats.tool_calls == 3 and tb.stats.tool_errors == 1 and tb.stats.max_window == 512
    assert tb.stats.large_returns == 0 and tb.stats.max_return <= LARGE_RETURN


def test_memory_tools_wrap_search_get_window_under_the_budget(memory):
    i = memory.add(ItemSpec("Procedure", "List subclasses through describe", "Use when asked for direct subclasses.",
                   "Call ontology_describe(iri) and read 'subclasses'. " * 40, task_types=["subclass-query"]))
    tb = Toolbox(memory, "p", TTL, ReadBudget(total_chars=600))
    f = {fn.__name__: fn for fn in tb.functions()}
    hits = f["memory_search"]("subclasses", k=100)
    assert hits["items"][0]["id"] == i and "Call ontology_describe" not in dumps(hits)
    got = f["memory_get"](i)
    assert got["title"] == "List subclasses through describe" and "Call ontology_describe" not in dumps(got)
    w = f["memory_window"](i, 0, 10**6)
    assert w["text"].startswith("Call ontology_describe") and len(w["text"]) == 512
    assert len(f["memory_window"](i, 512, 512)["text"]) == 88
    assert f["memory_window"](i, 600, 5).startswith("[Error] memory_window: read budget")
    assert f["memory_get"]("0123456789abcdef").startswith("[Error] memory_get:")
    assert tb.memory_ids_used == [i] and any(r.kind == "content" for r in tb.payloads)


def test_handle_window_reads_any_returned_handle_capped():
    store = BlobStore(":memory:")
    ref = store.put("z" * 5000, "report")
    tb = Toolbox(None, "p", None, blobs=store)
    f = {fn.__name__: fn for fn in tb.functions()}
    assert len(f["handle_window"](ref.key, 0, 10**6)["text"]) == 512
    assert f["handle_window"](ref=ref.key, start=4990)["text"] == "z" * 10


def _rlm_run(code_steps, tb, rlm_class=RLM):
    """Drive a real RLM (no interpreter_factory argument) on dspy's LocalInterpreter through scripted steps."""
    lm = DummyLM([{"reasoning": f"step {i}", "code": f"```python\n{c}\n```"} for i, c in enumerate(code_steps)])
    rlm = rlm_class("task -> answer", tools=tb.functions(), max_iters=4)
    with dspy.context(lm=lm, interpreter_factory=dspy.LocalInterpreter):  # dspy's configured default interpreter
        return rlm(task="read the prompt")


BOTH_STYLES = ("a = prompt_window(0, 11)\nb = prompt_window(start=0, length=11)\nc = results_peek(ontology_query("
               "'SELECT ?c WHERE { ?c <http://www.w3.org/2000/01/rdf-schema#subClassOf> ?x } ORDER BY ?c')"
               "['handle'], 2)\nprint(a['text'] == b['text'], a['text'], len(c['rows']))")


def test_both_call_styles_work_through_a_real_rlm_run():
    tb, _ = box()
    pred = _rlm_run([BOTH_STYLES, "SUBMIT(answer=a['text'])"], tb)
    assert pred.answer == "line 00000 "
    assert pred.trajectory[0]["output"] == "True line 00000  2"
    assert tb.stats.tool_calls == 4 and tb.stats.tool_errors == 0


def test_bad_arguments_through_rlm_are_error_strings_without_the_value():
    tb, _ = box()
    pred = _rlm_run(["print(prompt_window(start='" + "v" * 40 + "'))\nprint(prompt_window(1, 2, 3))\n"
                     "print(ontology_describe())", "SUBMIT(answer='done')"], tb)
    out = pred.trajectory[0]["output"].splitlines()
    assert out[0].startswith("[Error] prompt_window(start: int = 0, length: int = 512): argument 'start'")
    assert "start must be an integer" in out[0]
    assert "vvvv" not in pred.trajectory[0]["output"]
    assert "too many positional arguments" in out[1] and "missing a required argument: 'iri'" in out[2]
    assert tb.stats.tool_calls == 3 and tb.stats.tool_errors == 3  # bad calls are logged and counted too


def test_plain_dspy_rlm_takes_keywords_and_owl_errors_but_drops_positionals_on_local_interpreter():
    """dspy 3.4.1 wraps RLM tools as invoke(**kwargs) for LocalInterpreter: why owl_memory's RLM exists."""
    tb, _ = box()
    pred = _rlm_run(["print(prompt_window(start=0, length=11)['text'])\nprint(prompt_window(start='x' * 40))",
                     "print(prompt_window(0, 11))", "SUBMIT(answer='x')"], tb, rlm_class=dspy.RLM)
    first, second = pred.trajectory[0]["output"], pred.trajectory[1]["output"]
    assert first.startswith("line 00000 \n[Error] prompt_window(start: int = 0, length: int = 512): argument 'start'")
    assert "TypeError" in second and "prompt_window() takes 0 positional arguments" in second
    assert tb.stats.tool_calls == 2  # the positional call never reached the tool


def _deno_stub_source(name: str, parameters: list[dict]) -> str:
    """The Python stub dspy's runner.js defines in the Deno sandbox for one tool, generated by its own JavaScript."""
    runner = (Path(inspect.getfile(dspy.PythonInterpreter)).parent / "runner.js").read_text(encoding="utf-8")
    start, end = runner.find("const toPythonLiteral"), runner.find("// Generate SUBMIT function")
    key = re.search(r"const TOOL_BRIDGE_ERROR_KEY = .*;", runner)
    assert start > 0 and end > start and key, "dspy's runner.js changed: update this test's extraction"
    js = (key.group(0) + runner[start:end] +
          f"process.stdout.write(makeToolWrapper({json.dumps(name)}, {json.dumps(parameters)}));")
    return subprocess.run(["node", "-e", js], capture_output=True, text=True, check=True, timeout=30).stdout


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run dspy's runner.js stub generator")
@pytest.mark.parametrize("rlm_class", [dspy.RLM, RLM])
def test_deno_sandbox_stubs_bind_both_call_styles_and_reach_owl_tools(rlm_class, monkeypatch):
    tb, _ = box()
    rlm = rlm_class("task -> answer", tools=tb.functions())  # the default interpreter is Deno's PythonInterpreter
    host = dspy.PythonInterpreter(tools=execution_tools(rlm))  # not started: Deno is not needed here
    params = stub_parameters(host, "prompt_window")
    assert [(p["name"], p["default"]) for p in params] == [("start", 0), ("length", 512)]
    ffi = types.ModuleType("pyodide.ffi")
    ffi.run_sync, ffi.JsProxy = (lambda value: value), type("JsProxy", (), {})
    monkeypatch.setitem(sys.modules, "pyodide", types.ModuleType("pyodide"))
    monkeypatch.setitem(sys.modules, "pyodide.ffi", ffi)
    sandbox = {"_js_tool_call": lambda name, payload: host.invoke_tool(name, json.loads(payload)["kwargs"])}
    exec(_deno_stub_source("prompt_window", params), sandbox)  # noqa: S102 (dspy's own generated stub)
    a, b = sandbox["prompt_window"](0, 11), sandbox["prompt_window"](start=0, length=11)
    assert a["text"] == b["text"] == "line 00000 " and tb.stats.tool_calls == 2
    assert sandbox["prompt_window"]("x").startswith("[Error] prompt_window(start: int = 0, length: int = 512)")


def test_tool_call_cap_per_run():
    _, f = box(max_calls=3)
    outs = [f["prompt_stats"]() for _ in range(4)]
    assert isinstance(outs[2], dict) and outs[3].startswith("[Error]") and "limit of 3 tool calls" in outs[3]


def test_concurrent_tool_calls_from_agent_threads_share_one_budget():
    tb, _ = box(budget=ReadBudget(total_chars=3000))
    pred = _rlm_run([
        "from concurrent.futures import ThreadPoolExecutor\nwith ThreadPoolExecutor(8) as ex:\n"
        "    got = list(ex.map(lambda i: prompt_window(i * 512, 512), range(8)))\n"
        "print(sum(len(g['text']) for g in got if isinstance(g, dict)), sum(isinstance(g, str) for g in got))",
        "SUBMIT(answer='ok')"], tb)
    assert pred.trajectory[0]["output"] == "3000 2" and tb.budget.spent == 3000
