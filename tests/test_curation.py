"""Curation gates for packs: pack check scores generalization and flags hard-coded IRIs, Procedures without steps,
duplicate and near-duplicate titles; pack import --replace makes an edited export supersede its original."""

import json

from click.testing import CliRunner

from owl_memory import ItemSpec, Memory
from owl_memory.cli import main
from owl_memory.learning import export_pack


def line(kind, title, summary, content, **more):
    """One pack line."""
    return json.dumps({"kind": kind, "title": title, "summary": summary, "content": content, **more})


def test_pack_check_flags_what_does_not_generalize(tmp_path):
    pack = tmp_path / "p.jsonl"
    pack.write_text("\n".join([
        line("Principle", "Bind values never paste", "Use when a query takes user text.", "Always bind."),
        line("Principle", "Ask about Alice first", "Use for people questions.",
             "Start from <http://example.org/people/alice> and walk foaf:knows."),
        line("Procedure", "Answer schema questions well", "Use for schema questions.", "Think hard about it."),
        line("Principle", "Bind  values NEVER paste", "Use when a query takes user text!", "Bind, always."),
        line("AntiPattern", "Label answers lose IRIs", "Use for label questions on any ontology.", "No labels.",
             applies_to=["http://purl.org/dc/terms/"]),
        line("AntiPattern", "Label answers lose the IRIs", "Use for label questions on any ontology.", "Never."),
        line("Procedure", "Read a dcterms record", "Use for DC records.",
             "1. Ask for <http://purl.org/dc/terms/title>.\n2. Read every row.", applies_to=["http://purl.org/dc/terms/"]),
    ]) + "\n")
    result = CliRunner().invoke(main, ["pack", "check", str(pack), "--json"])
    assert result.exit_code == 1, result.output
    by_title = {c["title"]: c for c in json.loads(result.output)}
    assert by_title["Bind values never paste"] == {**by_title["Bind values never paste"], "generalization": 1.0,
                                                   "flags": []}
    alice = by_title["Ask about Alice first"]
    assert alice["generalization"] == 0.5 and alice["flags"][0].startswith(
        "universal item (applies to no ontology) names 1 hard-coded IRI(s), e.g. <http://example.org/people/alice>")
    assert by_title["Answer schema questions well"]["flags"] == ["a Procedure with no compiled action and no steps"]
    first = by_title["Bind values never paste"]["id"]
    assert by_title["Bind  values NEVER paste"]["flags"] == [f"duplicate title of {first}"]
    assert by_title["Label answers lose the IRIs"]["flags"][0].startswith("near-duplicate of ")
    assert by_title["Read a dcterms record"]["flags"] == []  # its IRI is in the namespace it applies to
    assert CliRunner().invoke(main, ["pack", "check", "starter"]).exit_code == 0


def test_an_edited_export_replaces_its_original_with_replace(tmp_path):
    mem, out = tmp_path / "m", tmp_path / "export.jsonl"
    with Memory(mem) as m:
        original = m.add(ItemSpec("Principle", "Declare every prefix", "Use for any query.", "PREFIX first."))
        export_pack(m, out)
    edited = json.loads(out.read_text())
    edited["content"] = "Declare every PREFIX your query uses, rdfs: and owl: included."
    out.write_text(json.dumps(edited) + "\n")
    cli = CliRunner()
    refused = cli.invoke(main, ["pack", "import", str(out), "--memory", str(mem)])
    assert refused.exit_code == 2 and "--replace" in refused.output
    done = cli.invoke(main, ["pack", "import", str(out), "--replace", "--memory", str(mem), "--json"])
    assert done.exit_code == 0, done.output
    report = json.loads(done.output)
    (new,) = report["added"]
    assert report["replaced"] == [{"original": original, "by": new}]
    with Memory(mem) as m:
        assert [h.id for h in m.search("prefix")] == [new]  # the original is kept but never retrieved again
        assert m.get(new).derived_from == (f"http://w3id.org/owl-memory/item/{original}",)
        assert m.get(original).title == "Declare every prefix" and m.validate().conforms
    again = json.loads(cli.invoke(main, ["pack", "import", str(out), "--replace", "--memory", str(mem),
                                         "--json"]).output)
    assert again["added"] == [] and again["replaced"] == []  # twice is the same as once


def test_a_curated_export_carries_each_line_s_score_and_imports_as_before(tmp_path):
    mem, out = tmp_path / "m", tmp_path / "curated.jsonl"
    with Memory(mem) as m:
        m.add(ItemSpec("Principle", "Ask about Alice first", "Use for people.", "Start at <http://example.org/alice>."))
        m.add(ItemSpec("Principle", "Bind values never paste", "Use when a query takes user text.", "Always bind."))
    done = CliRunner().invoke(main, ["pack", "export", str(out), "--curate", "--memory", str(mem)])
    assert done.exit_code == 0, done.output
    lines = {json.loads(x)["title"]: json.loads(x)["curation"] for x in out.read_text().splitlines()}
    assert lines["Ask about Alice first"]["generalization"] == 0.5 and lines["Bind values never paste"]["flags"] == []
    again = CliRunner().invoke(main, ["pack", "import", str(out), "--memory", str(tmp_path / "n"), "--json"])
    assert len(json.loads(again.output)["added"]) == 2
