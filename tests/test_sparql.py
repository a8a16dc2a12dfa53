"""Read-only SPARQL over a memory: Memory.sparql and `owl-memory sparql` (SELECT / ASK, bound values, refusals)."""

import json

import pytest
from click.testing import CliRunner
from rdflib import URIRef

from owl_memory import ItemSpec
from owl_memory.cli import main
from owl_memory.errors import QueryRefused

OM = "PREFIX om: <http://w3id.org/owl-memory#>\n"
PROV_O = "http://www.w3.org/ns/prov#"


@pytest.fixture
def filled(memory):
    """Two items; the second failed once."""
    a = memory.add(ItemSpec("Principle", "Bind values never paste", "Use when a query takes user text.", "SECRET-1",
                            applies_to=[PROV_O], priority=3))
    b = memory.add(ItemSpec("Procedure", "Page results with LIMIT", "Use when results may be large.", "SECRET-2",
                            applies_to=[PROV_O]))
    memory.record_use(b, False)
    return memory, a, b


def test_select_with_bound_values_answers_a_users_question(filled):
    memory, a, b = filled
    out = memory.sparql(OM + "SELECT ?i ?t WHERE { ?i om:appliesToOntology ?o ; om:title ?t ; om:failureCount ?f . "
                             "FILTER(?f > 0) }", {"o": URIRef(PROV_O)})
    assert out.to_dict() == {"columns": ["i", "t"],
                             "rows": [[f"http://w3id.org/owl-memory/item/{b}", "Page results with LIMIT"]],
                             "truncated": False}
    assert memory.sparql(OM + "ASK { ?i om:title ?t }", {"t": "Bind values never paste"}).rows == ((True,),)
    assert memory.sparql(OM + "ASK { ?i om:title ?t }", {"t": "} INSERT DATA { <a:b> <a:c> <a:d> } #"}).rows == (
        (False,),)  # a bound value is data, never query text


def test_payload_text_is_out_of_reach(filled):
    memory, _, _ = filled
    rows = memory.sparql("SELECT ?o WHERE { ?s ?p ?o }").rows
    assert rows and not any("SECRET" in str(r) for r in rows)


def test_rows_are_capped_and_marked_truncated(filled):
    memory, _, _ = filled
    out = memory.sparql("SELECT ?s ?p ?o WHERE { ?s ?p ?o }", limit=7)
    assert len(out.rows) == 7 and out.truncated is True


@pytest.mark.parametrize(("query", "message"), [
    ("INSERT DATA { <http://a/b> <http://a/c> <http://a/d> }", "updates"),
    ("LOAD <http://example.org/x.ttl>", "updates"),
    ("SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }", "SERVICE"),
    ("SELECT * WHERE { FILTER EXISTS { SERVICE <http://example.org/sparql> { ?s ?p ?o } } }", "SERVICE"),
    ("SELECT * FROM <http://example.org/g> WHERE { ?s ?p ?o }", "FROM"),
    ("CONSTRUCT WHERE { ?s ?p ?o }", "only SELECT and ASK"),
    ("SELECT * WHERE { ?s ?p ?o } LIMIT 100000", "LIMIT 100000"),
    ("SELECT ?s WHERE { ?s ?p", "does not parse"),
])
def test_refused_queries_raise_query_refused_and_change_nothing(filled, query, message):
    memory, _, _ = filled
    with pytest.raises(QueryRefused, match=message) as err:
        memory.sparql(query)
    assert isinstance(err.value, ValueError) and len(memory) == 2


def test_bad_binding_names_are_refused(filled):
    memory, _, _ = filled
    with pytest.raises(QueryRefused, match="variable name"):
        memory.sparql("SELECT ?s WHERE { ?s ?p ?o }", {"s }": "x"})


def test_cli_sparql_prints_rows_as_json_and_refuses_with_exit_2(filled):
    memory, a, _ = filled
    path = str(memory.location)
    memory.close()
    runner = CliRunner()
    ok = runner.invoke(main, ["sparql", OM + "SELECT ?t WHERE { ?i om:priority ?p ; om:title ?t }", "--bind",
                              "p=3", "--json", "--memory", path])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.output)["rows"] == []  # "3" bound as a string literal does not equal the integer 3
    iri = runner.invoke(main, ["sparql", OM + "SELECT ?t WHERE { ?i om:title ?t }", "--bind",
                               f"i=<http://w3id.org/owl-memory/item/{a}>", "--json", "--memory", path])
    assert json.loads(iri.output)["rows"] == [["Bind values never paste"]]
    table = runner.invoke(main, ["sparql", OM + "SELECT ?t WHERE { ?i om:title ?t }", "--memory", path])
    assert table.exit_code == 0 and "Page results with LIMIT" in table.output
    bad = runner.invoke(main, ["sparql", "DROP ALL", "--memory", path])
    assert bad.exit_code == 2 and "not allowed" in bad.output


def test_agent_tool_memory_query_returns_a_results_handle_never_content(filled):
    from owl_memory.agent.tools import Toolbox

    memory, a, b = filled
    tb = Toolbox(memory, "p", None)
    f = {fn.__name__: fn for fn in tb.functions()}
    out = f["memory_query"](OM + "SELECT ?i ?f WHERE { ?i om:failureCount ?f . FILTER(?f > 0) }")
    assert out["rows"] == 1 and out["handle"].startswith("sha256:")
    rows = f["results_peek"](out["handle"])["rows"]
    assert rows == [{"i": f"http://w3id.org/owl-memory/item/{b}", "f": "1"}]
    every = f["results_peek"](f["memory_query"]("SELECT ?o WHERE { ?s ?p ?o }")["handle"], n=20)
    assert "SECRET" not in json.dumps(every)
    assert f["memory_query"](OM + "ASK { ?i om:priority 3 }") == {"ask": True}
    assert f["memory_query"]("DELETE WHERE { ?s ?p ?o }").startswith("[Error] memory_query:")
    assert len(memory) == 2


def test_the_same_question_gets_the_same_answer_on_a_server(filled, oxigraph):
    from owl_memory import Memory
    from owl_memory.store.copy import copy_memory
    from owl_memory_bench.servers import clear

    memory, a, b = filled
    clear(oxigraph.url)
    question = OM + "SELECT ?i ?u WHERE { ?i om:appliesToOntology ?o ; om:useCount ?u } ORDER BY ?i"
    with Memory(oxigraph.url) as server:
        copy_memory(memory, server)
        assert server.sparql(question, {"o": URIRef(PROV_O)}) == memory.sparql(question, {"o": URIRef(PROV_O)})
        with pytest.raises(QueryRefused, match="SERVICE"):
            server.sparql("SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }")


def test_one_parse_serves_many_bindings_and_stays_as_written():
    """A parse is shared by every caller of the same text, so binding values into it must leave it untouched: the
    same template bound to two classes answers each class's members, and unbound it still answers every member."""
    from rdflib import Graph

    from owl_memory.adapters import sparql as sparql_text
    from owl_memory.adapters.sparql_binding import bind_terms

    g = Graph().parse(data="""@prefix e: <http://e/> .
        e:a a e:A . e:b a e:B . e:c a e:B .""", format="turtle")
    text = "SELECT ?x WHERE { ?x a ?c FILTER(?c != <http://e/Z>) } ORDER BY ?x"
    template = sparql_text.parse(text)
    assert sparql_text.parse(text) is template  # parsed once
    members = {}
    for cls in ("A", "B"):
        bound = bind_terms(template, {URIRef("http://e/Z"): URIRef(f"http://e/{cls}")})
        members[cls] = [str(r[0]) for r in sparql_text.evaluate(g, bound).rows]
    assert members == {"A": ["http://e/b", "http://e/c"], "B": ["http://e/a"]}
    assert [str(r[0]) for r in sparql_text.evaluate(g, template).rows] == ["http://e/a", "http://e/b", "http://e/c"]


def test_a_value_bound_inside_filter_exists_is_the_value_the_query_uses():
    from rdflib import Graph

    from owl_memory.adapters import sparql as sparql_text
    from owl_memory.adapters.sparql_binding import bind_terms

    g = Graph().parse(data="""@prefix e: <http://e/> .
        e:a a e:T ; e:likes e:red . e:b a e:T ; e:likes e:blue .""", format="turtle")
    template = sparql_text.parse("SELECT ?x WHERE { ?x a <http://e/T> FILTER NOT EXISTS { ?x <http://e/likes> "
                                 "<http://e/Z> } }")
    bound = bind_terms(template, {URIRef("http://e/Z"): URIRef("http://e/red")})
    assert [str(r[0]) for r in sparql_text.evaluate(g, bound).rows] == ["http://e/b"]
    assert sorted(str(r[0]) for r in sparql_text.evaluate(g, template).rows) == ["http://e/a", "http://e/b"]
