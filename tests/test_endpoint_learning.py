"""Endpoint runs teach memory query patterns: scripted dspy.RLM runs (DummyLM) answer TEXT2SPARQL CK25 questions on a
real Oxigraph loaded with the challenge's two Turtle files; the learning loop stores the lifted pattern of the query
behind a right answer as a Procedure about the classes and properties it used, and what failed in a wrong run's query
as an AntiPattern; a later run on the same endpoint, asked a different question of the same shape, finds them through
memory_search and A1."""

import json

import pytest
from dspy.utils import DummyLM

from owl_memory.agent.runner import run as run_agent
from owl_memory.learning import run as learn
from owl_memory.model import sha256
from owl_memory.model.endpoints import endpoint_key

TARGET = "https://text2sparql.aksw.org/2025/corporate/"
PV = "http://ld.company.org/prod-vocab/"
PERSON = "http://ld.company.org/prod-instances/empl-{}%40company.org"
DEPARTMENT = ("PREFIX pv: <http://ld.company.org/prod-vocab/> SELECT DISTINCT ?result WHERE {{ <{}> pv:memberOf "
              "?result . ?result a pv:Department . }}")
ASKED = {"Karen.Brant": "In which department is Ms. Brant?", "Baldwin.Dirksen": "In which department is Mr. Dirksen?",
         "Arnelle.Gerber": "In which department is Ms. Gerber?"}


def steps(*codes):
    """Scripted RLM actions for DummyLM."""
    return [{"reasoning": f"step {i + 1}", "code": f"```python\n{c}\n```"} for i, c in enumerate(codes)]


COUNT = f"n = endpoint_query(url, 'SELECT (COUNT(*) AS ?n) WHERE {{ ?s a <{PV}Employee> }}')\nprint(n['rows'])"


def answer(query: str, *, search: bool = False, count: bool = False) -> list[dict]:
    """An agent that (optionally searches memory with the question, then) runs `query` on the granted endpoint,
    reads its rows (with `count`, runs a count it does not answer with) and submits the rows' values."""
    look = "print([h['id'] for h in memory_search(text=task)['items']])\n" if search else ""
    ask = (f"{look}url = endpoint_list()['endpoints'][0]['url']\nq = endpoint_query(url, {query!r})\n"
           "print(q['rows'] if isinstance(q, dict) else q)\n"
           "rows = results_peek(q['handle'], 10)['rows'] if isinstance(q, dict) else []\n" + (COUNT if count else ""))
    return steps(ask, "SUBMIT(answer=', '.join(r['result'] for r in rows))")


def expect(person: str, url: str) -> dict:
    """The CK25 gold of a department question: the reference query, judged on the endpoint the target maps to."""
    return {"query": DEPARTMENT.format(PERSON.format(person)), "endpoint": f"{TARGET}={url}"}


def learned(memory, url, tmp_path, person: str, query: str, count: bool = False, **options):
    """One learning run of the department question about `person`, answered by `query`."""
    return learn(f"{ASKED[person]} (SPARQL endpoint: {url})", memory, learn=True, expect=expect(person, url),
                 task_type="sparql-authoring", lm=DummyLM(answer(query, count=count)), endpoints=(url,),
                 trajectory_dir=tmp_path, **options)


def test_a_right_answer_stores_the_lifted_pattern_and_a_later_question_finds_it(ck25_url, memory, tmp_path):
    query = DEPARTMENT.format(PERSON.format("Karen.Brant"))
    first = learned(memory, ck25_url, tmp_path, "Karen.Brant", query, count=True)
    assert first.judgment.success and first.answer == "http://ld.company.org/prod-instances/dept-73191"
    shown = first.to_dict()["answer_query"]  # the query whose rows were submitted, not the count run after it
    assert shown == {"tool": "endpoint_query", "source": ck25_url, "sparql": query, "sha": sha256(query), "rows": 1,
                     "error": None}
    (proc,) = [memory.get(i) for i in first.extracted if memory.get(i).kind == "Procedure"]
    assert proc.about_classes == (f"{PV}Department",) and proc.about_properties == (f"{PV}memberOf",)
    assert proc.applies_to == (PV,) and f"endpoint-{endpoint_key(ck25_url)}" in proc.tags
    assert "about Department, memberOf (member of)" in proc.summary  # a compound name in the words a reader uses
    assert [h.id for h in memory.search(text="member", k=5)] == [proc.id]  # "memberOf" alone is one word
    recipe = proc.action_schema.to_json()
    assert recipe["where"] == [["$p1", f"<{PV}memberOf>", "?v0"], ["?v0", "rdf:type", f"<{PV}Department>"]]
    assert recipe["parameters"] == [{"name": "$p1", "kind": "iri"}]  # the employee is a parameter, not kept
    text = json.dumps(proc.to_dict()) + memory.blobs.load(proc.content_ref)
    assert "Brant" not in text and "73191" not in text
    assert memory.validate().conforms

    second = run_agent(f"{ASKED['Baldwin.Dirksen']} (SPARQL endpoint: {ck25_url})", memory,
                       lm=DummyLM(answer(DEPARTMENT.format(PERSON.format("Baldwin.Dirksen")), search=True)),
                       endpoints=(ck25_url,), trajectory_dir=tmp_path)
    assert proc.id in second.memory_ids_used  # memory_search with the new question's text found the pattern
    assert second.answer == "http://ld.company.org/prod-instances/dept-85880"

    lm = DummyLM(answer(DEPARTMENT.format(PERSON.format("Arnelle.Gerber"))))
    third = run_agent(f"{ASKED['Arnelle.Gerber']} (SPARQL endpoint: {ck25_url})", memory, lm=lm, condition="A1",
                      endpoints=(ck25_url,), task_type="sparql-authoring", trajectory_dir=tmp_path)
    assert proc.id in third.memory_ids_used  # A1 selected it by the vocabulary the endpoint's profile lists
    injected = memory.blobs.load(memory.blobs.ref(third.to_dict()["injected_ref"]))
    assert f". {proc.title} (what worked, Procedure)" in injected
    sent = json.dumps(lm.history[0]["messages"])  # what the model was shown (the prior_experience input)
    assert all(json.dumps(line)[1:-1] in sent for line in injected.splitlines())
    assert "Relevant prior experience" not in json.dumps(third.to_dict())  # the record names the text, holds none


FAILURES = {
    "unknown-term": (DEPARTMENT.replace("memberOf", "worksIn"), True, "not in the vocabulary: worksIn"),
    "empty-result": (DEPARTMENT.replace("pv:Department", "pv:Product"), False, "0 rows"),
    "query-error": (DEPARTMENT.replace("WHERE {{", "WHERE {{ SERVICE <http://127.0.0.1:9/sparql> {{ ?x ?y ?z }}"),
                    False, "error class refused"),
}


@pytest.mark.parametrize("mode", list(FAILURES))
def test_a_wrong_answer_stores_an_antipattern_naming_what_failed_in_the_query(ck25_url, memory, tmp_path, shared_data,
                                                                              mode):
    broken, with_vocabulary, what = FAILURES[mode]
    ontology = shared_data / "text2sparql-ck25" / "prod-vocab.ttl" if with_vocabulary else None
    run = learned(memory, ck25_url, tmp_path, "Karen.Brant", broken.format(PERSON.format("Karen.Brant")),
                  ontology=ontology)
    assert not run.judgment.success and run.answer == ""
    (anti,) = [memory.get(i) for i in run.extracted if memory.get(i).kind == "AntiPattern"]
    assert mode in anti.failure_modes and f"endpoint-{endpoint_key(ck25_url)}" in anti.tags
    content = memory.blobs.load(anti.content_ref)
    assert f"Query failure ({mode}: {what})" in content and "Brant" not in content
    assert run.to_dict()["answer_query"]["error"] == ("refused" if mode == "query-error" else None)
    hits = memory.search(ontology=PV, failure_mode=mode, kinds=["AntiPattern"])
    assert [h.id for h in hits] == [anti.id]  # a later run on the vocabulary finds it by what failed
