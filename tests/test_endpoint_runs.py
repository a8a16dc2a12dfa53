"""Agents on an endpoint they were never told about: a scripted dspy.RLM run discovers an Oxigraph's graphs and
answers; the EndpointProfile it leaves in memory (validated, with PROV-O to the run) shortens the next run."""

import json

import pytest
from dspy.utils import DummyLM

from owl_memory.agent.endpoint_profiles import TASK_TYPE, find_profile
from owl_memory.agent.runner import run
from owl_memory.agent.trajectory import read_trajectory
from owl_memory.cli import main
from owl_memory.model import ToolCall
from owl_memory_bench.servers import ontology_endpoint

TASK = "Which named IRI classes does the SKOS graph of the endpoint declare? Full IRIs, comma-separated."
SKOS_CLASSES = ["http://www.w3.org/2004/02/skos/core#Collection", "http://www.w3.org/2004/02/skos/core#Concept",
                "http://www.w3.org/2004/02/skos/core#ConceptScheme",
                "http://www.w3.org/2004/02/skos/core#OrderedCollection"]
DISCOVER = """eps = endpoint_list()['endpoints']
url, profile = eps[0]['url'], eps[0]['profile']
if profile and profile['graphs']:
    graphs = profile['graphs']
else:
    print(endpoint_describe(url)['named_graphs'])
    graphs = endpoint_graphs(url, 10)['graphs']
skos = [g for g in graphs if g.endswith('/skos')][0]
print(url, skos)"""
ANSWER = """q = endpoint_query(url, 'SELECT ?c WHERE { GRAPH <' + skos + '> { '
                        '?c a <http://www.w3.org/2002/07/owl#Class> FILTER isIRI(?c) } } ORDER BY ?c')
rows = results_peek(q['handle'], 10)['rows']
print(q['source'] == url, q['rows'])"""
SUBMIT = "SUBMIT(answer=', '.join(r['c'] for r in rows))"


def steps(*codes):
    """Scripted RLM actions for DummyLM."""
    return [{"reasoning": f"step {i + 1}", "code": f"```python\n{c}\n```"} for i, c in enumerate(codes)]


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory, shared_data):
    """Oxigraph with three real ontologies as named graphs; its query URL."""
    server = ontology_endpoint(tmp_path_factory.mktemp("endpoint"), shared_data)
    yield f"{server.url}/query"
    server.stop()


def endpoint_calls(path) -> list[str]:
    """The endpoint_* tools a run called, in order."""
    return [e.tool for e in read_trajectory(path) if isinstance(e, ToolCall) and e.tool.startswith("endpoint_")]


def test_a_second_run_reuses_the_profile_the_first_left(endpoint, memory, tmp_path):
    lm = DummyLM(steps(DISCOVER, ANSWER, SUBMIT))
    first = run(TASK, memory, lm=lm, endpoints=(endpoint,), trajectory_dir=tmp_path)
    assert first.answer.split(", ") == SKOS_CLASSES
    shown = json.dumps(lm.history[0]["messages"])  # the model is told of the tools, not of the endpoint
    assert "endpoint_list" in shown and "endpoint_describe" in shown and endpoint not in shown
    assert endpoint_calls(first.trajectory_path) == ["endpoint_list", "endpoint_describe", "endpoint_graphs",
                                                     "endpoint_query"]
    item_id, profile = find_profile(memory, endpoint)
    assert len(profile.graphs) == 3 and profile.runs == (first.run_id,)
    assert "http://www.w3.org/ns/sparql-service-description#EmptyGraphs" in profile.features
    assert "http://www.w3.org/2002/07/owl#Class" in profile.classes
    item = memory.get(item_id)
    assert item.kind == "EndpointProfile" and item.runs == (f"http://w3id.org/owl-memory/run/{first.run_id}",)
    assert memory.validate().conforms
    assert [h.id for h in memory.search(task_type=TASK_TYPE, kinds=["EndpointProfile"])] == [item_id]

    second = run(TASK, memory, lm=DummyLM(steps(DISCOVER, ANSWER, SUBMIT)), endpoints=(endpoint,),
                 trajectory_dir=tmp_path)
    assert second.answer == first.answer
    assert endpoint_calls(second.trajectory_path) == ["endpoint_list", "endpoint_query"]
    assert item_id in second.memory_ids_used
    assert find_profile(memory, endpoint)[0] == item_id  # nothing new learned: the same version, no duplicate


def test_a_run_that_learns_more_supersedes_the_profile(endpoint, memory, tmp_path):
    run(TASK, memory, lm=DummyLM(steps(DISCOVER, ANSWER, SUBMIT)), endpoints=(endpoint,), trajectory_dir=tmp_path)
    old_id, _ = find_profile(memory, endpoint)
    failing = ("q = endpoint_query(url, 'SELECT ?c WHERE { ?c a <http://www.w3.org/2002/07/owl#Class> } LIMIT 1')\n"
               "print(q)")
    fixed = ("q = endpoint_query(url, 'SELECT ?c WHERE { GRAPH ?g { "
             "?c a <http://www.w3.org/2002/07/owl#ObjectProperty> } } LIMIT 1')\nprint(q['rows'])")
    second = run(TASK, memory, lm=DummyLM(steps(DISCOVER, failing, fixed, SUBMIT.replace("rows", "[]"))),
                 endpoints=(endpoint,), trajectory_dir=tmp_path)
    new_id, profile = find_profile(memory, endpoint)
    assert new_id != old_id and memory.get(new_id).supersedes == (old_id,)
    assert "http://www.w3.org/2002/07/owl#ObjectProperty" in profile.classes and len(profile.runs) == 2
    assert profile.quirks == ("error 'no rows' was fixed by a query using GRAPH",)
    assert profile.runs[-1] == second.run_id
    assert len(memory.search(task_type=TASK_TYPE, kinds=["EndpointProfile"], k=10)) == 1


def test_run_endpoint_from_the_command_line(endpoint, tmp_path):
    from click.testing import CliRunner

    out = CliRunner().invoke(main, ["run", TASK, "--endpoint", endpoint, "--lm", "scripted", "--memory",
                                    str(tmp_path / "mem"), "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["answer"] == "unknown"
    bad = CliRunner().invoke(main, ["run", TASK, "--endpoint", "ftp://example.org/x", "--lm", "scripted"])
    assert bad.exit_code == 2 and "http(s) URL" in bad.output


def test_condition_a1_injects_the_profile_of_the_runs_endpoint(endpoint, memory, tmp_path):
    run(TASK, memory, lm=DummyLM(steps(DISCOVER, ANSWER, SUBMIT)), endpoints=(endpoint,), trajectory_dir=tmp_path)
    item_id, _ = find_profile(memory, endpoint)
    lm = DummyLM(steps(DISCOVER, ANSWER, SUBMIT))
    r = run(TASK, memory, lm=lm, endpoints=(endpoint,), condition="A1", trajectory_dir=tmp_path)
    assert r.memory_ids_used[0] == item_id and endpoint_calls(r.trajectory_path) == ["endpoint_list", "endpoint_query"]
    sent = json.dumps(lm.history[0]["messages"])
    assert "Endpoint profile 127.0.0.1" in sent and "named graphs: http://example.org/graphs/" in sent
    other = run(TASK, memory, lm=DummyLM(steps(SUBMIT.replace("rows", "[]"))), condition="A1",
                endpoints=("http://127.0.0.1:9/query",), trajectory_dir=tmp_path)
    assert item_id not in other.memory_ids_used  # another endpoint's run is not given this one's profile


def test_a_profile_has_at_most_one_key_tag(memory):
    from owl_memory import ItemSpec
    from owl_memory.errors import InvalidItem

    with pytest.raises(InvalidItem, match="at most one key tag"):
        memory.add(ItemSpec("EndpointProfile", "Endpoint profile twice keyed", "Use when never.", "{}",
                            tags=("endpoint-0123456789abcdef", "endpoint-fedcba9876543210")))


def test_the_scripted_stand_in_discovers_then_reuses(endpoint, tmp_path):
    from click.testing import CliRunner

    args = ["run", "List the graphs", "--endpoint", endpoint, "--lm", "scripted", "--memory", str(tmp_path / "m"),
            "--json"]
    first, second = (json.loads(CliRunner().invoke(main, args).output) for _ in range(2))
    assert endpoint_calls(first["trajectory"]) == ["endpoint_list", "endpoint_graphs"]
    assert endpoint_calls(second["trajectory"]) == ["endpoint_list"]


def test_profiles_left_by_racing_writers_are_merged_into_one(endpoint, memory, tmp_path):
    from owl_memory.agent.endpoint_profiles import active_profiles, profile_spec
    from owl_memory.model.endpoints import EndpointProfile

    for graphs in (("http://example.org/graphs/skos", "http://example.org/graphs/a"), ("http://example.org/graphs/b",)):
        memory.add(profile_spec(EndpointProfile(endpoint, graphs=graphs)))
    assert len(active_profiles(memory, endpoint)) == 2
    run(TASK, memory, lm=DummyLM(steps(DISCOVER, ANSWER, SUBMIT)), endpoints=(endpoint,), trajectory_dir=tmp_path)
    (only_id, profile), = active_profiles(memory, endpoint)
    assert {"http://example.org/graphs/a", "http://example.org/graphs/b"} <= set(profile.graphs)
    assert len(memory.get(only_id).supersedes) == 2


def test_the_notebook_keeps_only_quirks_that_teach_something():
    from owl_memory.agent.endpoint_profiles import Notebook

    book, url = Notebook(), "http://127.0.0.1:1/q"
    book.query_answered(url, "SELECT ?s WHERE { ?s a <urn:A> }", set(), set(), 0, False)
    book.query_answered(url, "SELECT ?s WHERE { ?s a <urn:B> }", {"urn:"}, {"urn:B"}, 3, False)
    assert url in book.profiles and book.profiles[url].quirks == ()
    book.query_failed(url, "SELECT * WHERE { ?s ?p ?o }", f"{url} did not answer within 10 s; simplify")
    book.query_answered(url, "SELECT * WHERE { ?s ?p ?o } LIMIT 10", set(), set(), 10, True)
    profile = book.profiles[url]
    (quirk,) = profile.quirks
    assert "did not answer within 10 s" in quirk and quirk.endswith("was fixed by a query using LIMIT")
    assert profile.limits == (f"{url} did not answer within 10 s", "rows cut at the run's row cap")


def test_l0_without_an_ontology_is_the_card_of_the_runs_endpoints(endpoint, memory, tmp_path):
    lm = DummyLM(steps(SUBMIT.replace("rows", "[]")))
    cold = run(TASK, memory, lm=lm, endpoints=(endpoint,), layers="L0", trajectory_dir=tmp_path)
    assert "nothing known yet; discover it with endpoint_describe" in json.dumps(lm.history[0]["messages"])
    assert cold.answer == ""
    run(TASK, memory, lm=DummyLM(steps(DISCOVER, ANSWER, SUBMIT)), endpoints=(endpoint,), trajectory_dir=tmp_path)
    lm = DummyLM(steps(SUBMIT.replace("rows", "[]")))
    run(TASK, memory, lm=lm, endpoints=(endpoint,), layers="L0", trajectory_dir=tmp_path)
    sent = json.dumps(lm.history[0]["messages"])
    assert "Endpoint card (L0)" in sent and "3 named graphs (http://example.org/graphs/" in sent


def test_a_constraint_item_is_checked_on_endpoint_queries(endpoint, memory, tmp_path):
    from owl_memory import ItemSpec
    from owl_memory.model import QueryConstraint

    needs_limit = memory.add(ItemSpec("Constraint", "Endpoint queries need a LIMIT", "Use for every query.",
                                      "needs-limit", action_schema=QueryConstraint("needs-limit")))
    r = run(TASK, memory, lm=DummyLM(steps(DISCOVER, ANSWER + "\nprint(q.get('constraints'))", SUBMIT)),
            endpoints=(endpoint,), trajectory_dir=tmp_path)
    assert r.answer.split(", ") == SKOS_CLASSES and r.metrics.constraint_violations == 1
    assert f"constraint {needs_limit} violated: the query needs a LIMIT" in r.trajectory_path.read_text()
