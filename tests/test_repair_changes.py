"""Repair that respects the data (issue 26): the cheapest change set of the whole case, no value copied from another
node, a change list a person can read, the input's prefixes and base kept."""

import json

from click.testing import CliRunner
from rdflib import Graph, Literal, Namespace

from owl_memory.cli import main
from owl_memory.repair import repair
from owl_memory.repair.cost import MINT, RETYPE, change_cost
from owl_memory.repair.patch import Patch
from owl_memory.repair.registry import strategy, unregister
from owl_memory.vocab import RDF, SH
from owl_memory_bench.repair.copies import copied

EX = Namespace("http://example.org/")
PROV = Namespace("http://www.w3.org/ns/prov#")
FOAF = Namespace("http://xmlns.com/foaf/0.1/")
DATA = """@prefix ex: <http://example.org/> .
@prefix prov: <http://www.w3.org/ns/prov#> .
@prefix foaf: <http://xmlns.com/foaf/0.1/> .

ex:alice a prov:Agent ; foaf:mbox "alice@example.org" .
ex:bob a prov:Agent ; foaf:mbox "bob at example" .
ex:report a prov:Entity ; prov:wasGeneratedBy ex:alice ; prov:generatedAtTime "yesterday" .
ex:analysis a prov:Activity ; prov:wasAssociatedWith ex:alice .
"""
SHAPES = """@prefix ex: <http://example.org/> .
@prefix prov: <http://www.w3.org/ns/prov#> .
@prefix foaf: <http://xmlns.com/foaf/0.1/> .
@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .

ex:AgentShape a sh:NodeShape ; sh:targetClass prov:Agent ;
  sh:property [ sh:path foaf:mbox ; sh:pattern "^[^@ ]+@[^@ ]+\\\\.[a-z]+$" ; sh:maxCount 1 ] .
ex:EntityShape a sh:NodeShape ; sh:targetClass prov:Entity ;
  sh:property [ sh:path prov:wasGeneratedBy ; sh:class prov:Activity ] ;
  sh:property [ sh:path prov:generatedAtTime ; sh:datatype xsd:dateTime ] .
ex:ActivityShape a sh:NodeShape ; sh:targetClass prov:Activity ;
  sh:property [ sh:path prov:wasAssociatedWith ; sh:class prov:Agent ; sh:minCount 1 ] .
"""


def test_the_cost_puts_retyping_and_minting_above_one_value():
    """Adding or dropping a value costs 1; retyping a typed node and minting a described node cost more."""
    g = Graph().parse(data=DATA, format="turtle")
    assert change_cost(g, [], [(EX.report, PROV.wasGeneratedBy, EX.alice)]) == 1
    assert change_cost(g, [(EX.alice, RDF.type, PROV.Activity)], []) == 1 + RETYPE
    assert change_cost(g, [(EX.report, PROV.wasGeneratedBy, EX.new), (EX.new, RDF.type, PROV.Activity)], []) == \
        2 + MINT
    assert change_cost(g, [(EX.untyped, RDF.type, PROV.Agent)], []) == 1, "typing a node with no type is a value"


def test_a_wrong_class_link_is_dropped_not_fixed_by_retyping_and_minting():
    """The issue's PROV-O graph: report prov:wasGeneratedBy alice (an Agent). Dropping the link (1 triple) beats
    typing alice an Activity, which makes the Activity shape ask her for an associated Agent (4 triples)."""
    res = repair(DATA, SHAPES)
    assert res.conforms and (EX.report, PROV.wasGeneratedBy, EX.alice) in res.removed
    assert not res.added and len(res.removed) == 3
    assert (EX.alice, RDF.type, PROV.Activity) not in res.graph


def test_bobs_malformed_email_never_becomes_alices():
    """No mode copies a value from another node: the default drops bob's bad address, keeping values writes one that
    says it is synthetic and the change list says so too."""
    for keep in (False, True):
        res = repair(DATA, SHAPES, keep_values=keep)
        bob = set(res.graph.objects(EX.bob, FOAF.mbox))
        assert Literal("alice@example.org") not in bob
        # keeping values, the report's "yesterday" (no dateTime keeps its text) is left and said, never 2000-01-01
        assert res.conforms is not keep and [u.split("|")[0] for u in res.unrepaired] == \
            (["DatatypeConstraintComponent"] if keep else [])
        assert copied(Graph().parse(data=DATA, format="turtle"), Graph().parse(data=SHAPES, format="turtle"),
                      res.added, keep_values=keep) == []
    assert bob and "synthetic" in str(next(iter(bob)))
    [group] = [grp for grp in res.changes if grp.focus == "ex:bob"]
    assert group.synthetic == ['ex:bob foaf:mbox "synthetic@example.invalid"']
    default = repair(DATA, SHAPES)
    assert not set(default.graph.objects(EX.bob, FOAF.mbox))


def test_the_copy_check_catches_a_strategy_that_copies():
    """A deliberately bad strategy copies another agent's address; the independent check names the triple."""

    @strategy("test.copy_other", SH.PatternConstraintComponent, bindings={})
    def _copy_other(ctx, v):
        """Replace the value by another node's value on the same predicate."""
        other = sorted(o for s, o in ctx.graph.subject_objects(v.path) if s != v.focus)
        return [Patch("test.copy_other", frozenset({(v.focus, v.path, other[0])}),
                      frozenset({(v.focus, v.path, v.value)}), frozenset({v.focus}))]

    try:
        data, shapes = Graph().parse(data=DATA, format="turtle"), Graph().parse(data=SHAPES, format="turtle")
        res = repair(data, shapes, keep_values=True)
        assert (EX.bob, FOAF.mbox, Literal("alice@example.org")) in res.added
        assert copied(data, shapes, res.added, keep_values=True) == [(EX.bob, FOAF.mbox, Literal("alice@example.org"))]
    finally:
        unregister("test.copy_other")


def test_keeping_values_a_value_nothing_derives_or_synthesizes_is_left_and_reported():
    """A pattern no generator meets: without --keep-values the value is dropped; with it, it stays and the reason
    says why (never a copy of the conforming value beside it)."""
    text = SHAPES.replace('"^[^@ ]+@[^@ ]+\\\\.[a-z]+$"', '"^(?=x)y"')
    res = repair(DATA, text, keep_values=True)
    assert not res.conforms and (EX.bob, FOAF.mbox, Literal("bob at example")) in res.graph
    assert any("keeping values forbids dropping it" in why for why in res.reasons.values())


def _cli(tmp_path, *args):
    """Run `owl-memory repair` on the PROV-O files; the CLI result."""
    (tmp_path / "data.ttl").write_text("@base <http://example.org/> .\n" + DATA, encoding="utf-8")
    (tmp_path / "shapes.ttl").write_text(SHAPES, encoding="utf-8")
    return CliRunner().invoke(main, ["repair", str(tmp_path / "data.ttl"), "--shapes", str(tmp_path / "shapes.ttl"),
                                     "--memory", str(tmp_path / "mem"), *args])


def test_the_human_output_lists_every_change_by_focus_and_violation(tmp_path):
    """Every removed and added triple, with the data's prefixes, under its focus node and violation; no progress
    drawing when the output is not a terminal."""
    res = _cli(tmp_path, "--keep-values")
    assert res.exit_code == 1, res.output  # keeping values, the report's "yesterday" is left: no dateTime keeps it
    lines = res.output.splitlines()
    assert lines[0].startswith("does NOT conform: 3 violations found; 3 triples added and 1 removed")
    at = lines.index("ex:bob")
    assert lines[at + 1].startswith('  sh:pattern on foaf:mbox, value "bob at example"  [pattern.generate]')
    assert lines[at + 2] == '    - ex:bob foaf:mbox "bob at example" .'
    assert lines[at + 3] == '    + ex:bob foaf:mbox "synthetic@example.invalid" .    # synthetic'
    assert "ex:report" in lines and "    + ex:alice rdf:type prov:Activity .    # type" in lines
    assert not any(c in res.output for c in "⠋⠙⠹"), "no spinner when piped"


def test_json_carries_the_same_change_list(tmp_path):
    """--json: the groups, their triples as the human output prints them, and each origin."""
    res = _cli(tmp_path, "--json")
    summary = json.loads(res.output.strip().splitlines()[-1])
    triples = [(c["sign"], c["triple"]) for g in summary["changes"] for c in g["changes"]]
    assert sorted(triples) == [("-", 'ex:bob foaf:mbox "bob at example"'),
                               ("-", 'ex:report prov:generatedAtTime "yesterday"'),
                               ("-", "ex:report prov:wasGeneratedBy ex:alice")]
    assert {g["violation"] for g in summary["changes"]} >= {"sh:class on prov:wasGeneratedBy, value ex:alice"}
    assert summary["removed"] == 3 and summary["added"] == 0


def test_the_repaired_file_keeps_the_input_prefixes_and_base(tmp_path):
    """ex: stays ex: (not ns1:) and the @base is written back, so a diff shows only the repair."""
    out = tmp_path / "fixed.ttl"
    res = _cli(tmp_path, "--out", str(out), "--keep-values")
    assert res.exit_code == 1, res.output  # written all the same; "yesterday" is left (no dateTime keeps it)
    text = out.read_text(encoding="utf-8")
    assert "@base <http://example.org/> ." in text and "@prefix prov: <http://www.w3.org/ns/prov#> ." in text
    assert "ns1:" not in text and "<bob> a prov:Agent ;" in text and "@prefix ex: <http://example.org/> ." in text
    assert len(Graph().parse(out)) == len(Graph().parse(tmp_path / "data.ttl")) + 3 - 1


def test_progress_is_reported_each_round():
    """A caller (the CLI's spinner on a terminal) hears the violations left and the patches chosen, round by round."""
    lines: list = []
    assert repair(DATA, SHAPES, progress=lines.append).conforms
    assert lines == ["round 1: 3 violations to repair", "round 1: 3 patches chosen, verifying",
                     "round 2: 0 violations to repair"]
