"""`owl-memory repair`: a file holding data and shapes keeps its shapes, exit codes, --keep-values."""

import json

import pytest
from click.testing import CliRunner
from rdflib import Graph, Literal, Namespace
from rdflib.namespace import DCAT, DCTERMS as DCT, FOAF, RDF
from test_repair import HEAD, SHAPES

from owl_memory.cli import main
from owl_memory.repair import shape_triples

EX = Namespace("http://example.org/")


def test_cli_repair_same_file_keeps_shapes(tmp_path):
    path = tmp_path / "both.ttl"
    path.write_text(HEAD + 'ex:a a ex:Person ; ex:age "42" .\n' + SHAPES.replace(HEAD, ""), encoding="utf-8")
    out = tmp_path / "fixed.ttl"
    result = CliRunner().invoke(main, ["repair", str(path), "--shapes", str(path), "--memory",
                                       str(tmp_path / "mem"), "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output.strip().splitlines()[-1])
    assert summary["conforms"] and len(summary["compiled_new"]) == 2
    before, after = Graph().parse(path), Graph().parse(out)
    assert shape_triples(before) <= set(after)
    assert len(after) == len(before) + summary["added"] - summary["removed"]
    again = CliRunner().invoke(main, ["repair", str(path), "--shapes", str(path), "--memory", str(tmp_path / "mem"),
                                      "--json"])
    assert json.loads(again.output.strip().splitlines()[-1])["compiled_reused"] == 2


def test_cli_repair_exit_codes(tmp_path):
    bad = tmp_path / "bad.ttl"
    bad.write_text("@prefix ex: <http://ex.org/> .\nex:a ex:b .\n", encoding="utf-8")
    stuck = tmp_path / "stuck.ttl"
    stuck.write_text(HEAD + "ex:S a sh:NodeShape ; sh:targetNode 42 ; sh:datatype xsd:string .", encoding="utf-8")
    mem = str(tmp_path / "mem")
    assert CliRunner().invoke(main, ["repair", str(bad), "--shapes", str(bad), "--memory", mem]).exit_code == 2
    res = CliRunner().invoke(main, ["repair", str(stuck), "--shapes", str(stuck), "--memory", mem])
    assert res.exit_code == 1 and "fixed term" in res.output
    assert CliRunner().invoke(main, ["repair", "--help"]).exit_code == 0


def test_cli_keep_values_replaces_what_the_default_drops(tmp_path):
    """`repair --keep-values` casts the optional bad age; the default drops it (the smaller change set)."""
    path = tmp_path / "both.ttl"
    path.write_text(HEAD + 'ex:a a ex:Person ; ex:name "A" ; ex:age "42" .\n' + SHAPES.replace(HEAD, ""),
                    encoding="utf-8")
    runs = {}
    for flag in ([], ["--keep-values"]):
        res = CliRunner().invoke(main, ["repair", str(path), "--shapes", str(path), "--memory",
                                        str(tmp_path / f"mem{len(flag)}"), "--json", *flag])
        assert res.exit_code == 0, res.output
        runs[bool(flag)] = json.loads(res.output.strip().splitlines()[-1])
    assert (runs[False]["added"], runs[False]["removed"]) == (0, 1)
    assert (runs[True]["added"], runs[True]["removed"]) == (1, 1)
    assert runs[True]["operators_applied"][0]["operator"] == "datatype.cast"


@pytest.mark.shared_data
def test_keep_values_keeps_the_users_text_on_dcat_ap(shared_data, tmp_path):
    """--keep-values on DCAT-AP: a publisher given as text becomes an Agent named by that text (never foaf:name ""),
    and a byte size written "about 2 MB" is never replaced by 0: no value of the datatype keeps its text, so it is
    reported and left for the user."""
    data = tmp_path / "data.ttl"
    data.write_text(KEEP_DATA, encoding="utf-8")
    out = tmp_path / "fixed.ttl"
    done = CliRunner().invoke(main, ["repair", str(data), "--shapes", str(shared_data / "ontologies" /
                                     "dcat-ap-SHACL.ttl"), "--keep-values", "--out", str(out), "--memory",
                                     str(tmp_path / "m")])
    assert done.exit_code == 1, done.output  # the byte size is left: the data does not conform
    fixed = Graph().parse(out)
    (agent,) = fixed.objects(EX.cat, DCT.publisher)
    assert fixed.value(agent, FOAF.name) == Literal("City of Example") and (agent, RDF.type, FOAF.Agent) in fixed
    assert "kept: the value of ex:cat dct:publisher" in done.output
    assert fixed.value(EX.dist, DCAT.byteSize) == Literal("about 2 MB")
    assert "keeping values forbids dropping it" in done.output and '""' not in out.read_text()


KEEP_DATA = """@prefix dcat: <http://www.w3.org/ns/dcat#> . @prefix dct: <http://purl.org/dc/terms/> .
@prefix ex: <http://example.org/> .
ex:cat a dcat:Catalog ; dct:title "Open data of Example"@en ; dct:description "All datasets of the city."@en ;
  dct:publisher "City of Example" ; dcat:dataset ex:ds .
ex:ds a dcat:Dataset ; dct:title "Trees"@en ; dct:description "Every tree in the city."@en ; dcat:distribution ex:dist .
ex:dist a dcat:Distribution ; dcat:accessURL <http://example.org/trees.csv> ; dcat:byteSize "about 2 MB" .
"""
