"""Bad RDF in any format rdflib parses, and SPARQL that fails, come back as one typed error with the line and reason."""

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from rdflib import Dataset, Graph, Literal, URIRef

from owl_memory.adapters import rdflib as rdf
from owl_memory.adapters.sparql import evaluate
from owl_memory.errors import LoadError, QueryFailed
from owl_memory.rdfio import load_graph

EX = "http://example.org/"
QUADS = ("nquads", "trig", "trix", "hext")  # formats of named graphs: written from a Dataset


def document(format: str) -> str:
    """A small valid document in `format`: nine triples, a literal with a language, a typed literal."""
    ds = Dataset()
    g = ds.graph(URIRef(EX + "g")) if format in QUADS else Graph()
    for i in range(3):
        s = URIRef(f"{EX}s{i}")
        g.add((s, URIRef(EX + "name"), Literal(f"thing {i}", lang="en")))
        g.add((s, URIRef(EX + "size"), Literal(i)))
        g.add((s, URIRef(EX + "next"), URIRef(f"{EX}s{i + 1}")))
    return (ds if format in QUADS else g).serialize(format=format)


BROKEN = [  # (format, text, line the error names or None, words of the reason)
    ("turtle", "@prefix ex: <http://example.org/> .\nex:a ex:p ex:b .\nex:a ex:q .\n", 3, "objectList expected"),
    ("turtle", "ex:a ex:p 1 .\n", 1, 'Prefix "ex:" not bound'),
    ("turtle", '@prefix ex: <http://example.org/> .\nex:a ex:p "no end', None, "Quote expected"),
    ("turtle", "@prefix ex: <http://example.org/> .\nex:a ex:p ex:b ; ex:q ex:c", None, "ends inside a statement"),
    ("nt", "<http://example.org/a> <http://example.org/p> <http://example.org/b> .\n<a b> <c> .\n", None,
     "Invalid line"),
    ("xml", '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\n<rdf:Description>\n</rdf:RDF>\n', 3,
     "mismatched tag"),
    ("json-ld", '{\n  "@id": "http://example.org/a",\n  "http://example.org/p": \n}\n', 4, "not JSON"),
    ("json-ld", '{"@context": 5, "@id": "http://example.org/a"}', None, "object has no attribute"),
    ("json-ld", '{"@context": {"@vocab": 1}, "@id": "http://example.org/a", "p": 1}', None, "unsupported operand"),
    ("hext", '["http://example.org/a", null, "x", "", "", ""]\n', None, "cannot be None"),
]


@pytest.mark.parametrize("format,text,line,reason", BROKEN, ids=[f"{b[0]}-{i}" for i, b in enumerate(BROKEN)])
def test_bad_rdf_is_a_load_error_with_its_line_and_reason(format, text, line, reason):
    with pytest.raises(LoadError) as e:
        rdf.parse_text(text, format, source="answer.txt")
    assert e.value.line == line and reason in e.value.reason
    assert str(e.value).startswith("answer.txt") and "fix the RDF" in str(e.value)
    if format == "turtle":  # what a construction agent writes: its text never comes back in the reason
        assert "example.org" not in e.value.reason and "ex:" not in e.value.reason.replace('"ex:"', "")


def test_files_that_cannot_be_read_say_so(tmp_path):
    latin = tmp_path / "latin1.ttl"
    latin.write_bytes('<http://example.org/a> <http://example.org/p> "caf\xe9" .\n'.encode("latin-1"))
    with pytest.raises(LoadError, match="not UTF-8 text .*iconv"):
        load_graph(latin)
    context = tmp_path / "uses-context.jsonld"
    context.write_text('{"@context": "missing-context.jsonld", "@id": "http://example.org/a", "p": 1}')
    with pytest.raises(LoadError, match=r"no such file \(.*missing-context.jsonld\); check the path"):
        load_graph(context)
    with pytest.raises(LoadError, match="no such file"):
        load_graph(tmp_path / "absent.ttl")


@pytest.mark.parametrize("path", ["missing.ttl", "data/missing.OWL", "my data/missing.jsonld"])
def test_a_missing_file_named_by_a_string_is_not_parsed_as_turtle(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(LoadError) as e:
        load_graph(path)
    assert str(e.value) == f"{path}: no such file; check the path"


def test_one_line_of_turtle_is_still_text():
    assert len(load_graph("<http://example.org/a> <http://example.org/p> <http://example.org/b.ttl> .")) == 1


def test_nesting_deeper_than_the_stack_is_a_load_error():
    deep = "@prefix ex: <http://example.org/> .\nex:a ex:p " + "( " * 20_000 + ") " * 20_000 + ".\n"
    with pytest.raises(LoadError, match="nested too deeply"):
        rdf.parse_text(deep)


def test_an_n3_term_parses_or_is_a_load_error():
    assert rdf.term('"x"@en') == Literal("x", lang="en") and rdf.term(f"<{EX}a>") == URIRef(EX + "a")
    for bad in ("ex:a", '"x"@en0', "{ <a> <b> <c> }"):
        with pytest.raises(LoadError):
            rdf.term(bad)


def test_json_ld_from_another_party_makes_the_parser_fetch_nothing(tmp_path):
    """rdflib reads whatever context a JSON-LD document names (a URL or a file); text another party wrote (an
    endpoint's service description) is refused for it before the parser runs."""
    context = tmp_path / "context.jsonld"
    context.write_text(json.dumps({"@context": {"p": EX + "p"}}))
    named = {"@context": str(context), "@id": EX + "a", "p": 1}
    assert len(rdf.parse_text(json.dumps(named), "json-ld")) == 1  # a user's own file: its context is read
    missing = str(tmp_path / "missing.jsonld")  # were it read, the error would be "no such file"
    for doc in ({"@context": missing, "@id": EX + "a", "p": 1},
                {"@context": {"@import": missing}, "@id": EX + "a", "p": 1},
                {"@id": EX + "a", EX + "q": {"@context": [missing], "@id": EX + "b", "p": 2}}, named):
        with pytest.raises(LoadError, match="names a context to fetch"):
            rdf.parse_text(json.dumps(doc), "json-ld", fetch=False)
    inline = {"@context": {"p": EX + "p"}, "@id": EX + "a", "p": 1}
    assert len(rdf.parse_text(json.dumps(inline), "json-ld", fetch=False)) == 1


FORMATS = ("turtle", "nt", "n3", "xml", "json-ld", "trig", "nquads", "trix", "hext")
PIECES = st.sampled_from(list("<>\"'@:;.,[](){}_^#\\ \n0é") + ["@prefix", "\\u00", "&", "</", "\"@id\"", "null", "[]"])


@settings(max_examples=40, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cut=st.integers(0, 10_000), length=st.integers(0, 12), piece=PIECES)
@pytest.mark.parametrize("format", FORMATS)
def test_a_damaged_document_parses_or_is_a_load_error(format, cut, length, piece):
    """Whatever a splice does to a valid document, the adapter answers a graph or a LoadError, never another
    exception type: the parser exceptions it catches are listed, not everything."""
    text = document(format)
    at = cut % len(text)
    damaged = text[:at] + piece + text[at + length:]
    try:
        rdf.parse_text(damaged, format, graph=Dataset() if format in QUADS else Graph())
    except LoadError as e:
        assert e.reason and len(e.reason) <= 200


def test_sparql_that_fails_is_a_query_failed_and_rows_are_capped():
    g = load_graph(f"@prefix ex: <{EX}> . ex:a ex:p 1, 2, 3 .")
    for bad, why in (("SELECT ?x WHERE { nope:a ?p ?x }", "Unknown namespace prefix"),
                     ("SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }", "dataset"),
                     ("SELECT * WHERE { ?s ?p", "ParseException")):
        with pytest.raises(QueryFailed, match=why):
            evaluate(g, bad)
    answer = evaluate(g, "SELECT ?o WHERE { ex:a ex:p ?o } ORDER BY ?o", max_rows=2)
    assert answer.columns == ("o",) and answer.rows == ((Literal(1),), (Literal(2),)) and answer.truncated
    assert evaluate(g, "ASK { ex:a ex:p 3 }").ask is True
