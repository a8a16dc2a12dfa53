"""A person reads, compares and annotates runs from the command line: trajectory, compare, reflect."""

import json
from pathlib import Path

from click.testing import CliRunner
from dspy.utils import DummyLM

from owl_memory import Memory, run
from owl_memory.cli import main
from owl_memory.learning import export_pack

LIBRARY = Path(__file__).resolve().parents[1] / "experiments" / "curricula" / "library.ttl"
QUERY = ("PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> PREFIX lib: <http://w3id.org/owl-memory/examples/"
         "library#> SELECT ?x WHERE { ?x rdfs:subClassOf lib:Work }")


def two_runs(tmp_path):
    """Two runs of one question in one memory: one that queries, one that answers blind."""
    mem = tmp_path / "m"
    with Memory(mem) as m:
        queried = run("Direct subclasses of lib:Work?", memory=m, ontology=LIBRARY, lm=DummyLM([
            {"reasoning": "query", "code": f"r = ontology_query({QUERY!r})\nprint(results_peek(r['handle']))"},
            {"reasoning": "done", "code": "SUBMIT(answer='Article, Book, Thesis')"}]))
        blind = run("Direct subclasses of lib:Work?", memory=m, ontology=LIBRARY, lm=DummyLM([
            {"reasoning": "guess", "code": "SUBMIT(answer='Book')"}]))
    return mem, queried, blind


def test_a_trajectory_reads_as_steps_and_two_runs_compare_side_by_side(tmp_path):
    mem, queried, blind = two_runs(tmp_path)
    cli = CliRunner()
    shown = cli.invoke(main, ["trajectory", queried.run_id, "--memory", str(mem)])
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert lines[0] == f"run {queried.run_id}: Direct subclasses of lib:Work?"
    assert "-- iteration 0 --" in lines and "    query on ontology (ontology_query): 3 rows" in lines
    assert any(line.startswith("  tool results_peek(") for line in lines)
    assert lines[-2] == "ended ok: Article, Book, Thesis"
    by_path = cli.invoke(main, ["trajectory", str(queried.trajectory_path), "--json"])
    assert [e["event"] for e in json.loads(by_path.output)][0] == "run_start"
    compared = cli.invoke(main, ["compare", queried.run_id, blind.run_id, "--memory", str(mem), "--json"])
    first, second = json.loads(compared.output)["runs"]
    assert (first["queries"], second["queries"]) == (1, 0) and (first["answer"], second["answer"]) == (
        "Article, Book, Thesis", "Book")
    assert first["iterations"] == 2 and second["iterations"] == 1
    table = cli.invoke(main, ["compare", queried.run_id, blind.run_id, "--memory", str(mem)]).output
    assert any(line.split()[:3] == ["queries", "1", "0"] for line in table.splitlines())
    missing = cli.invoke(main, ["trajectory", "../../etc/passwd", "--memory", str(mem)])
    assert missing.exit_code == 2 and "not a run id" in missing.output


def test_a_hint_becomes_an_item_linked_to_its_run_and_attributed_to_a_person(tmp_path):
    mem, _, blind = two_runs(tmp_path)
    hint = "Query the ontology before answering: a guess missed two of the three subclasses."
    added = CliRunner().invoke(main, ["reflect", blind.run_id, "--hint", hint, "--kind", "AntiPattern", "--memory",
                                      str(mem), "--json"])
    assert added.exit_code == 0, added.output
    item_id = json.loads(added.output)["id"]
    with Memory(mem) as m:
        item = m.get(item_id)
        assert (item.kind, item.summary) == ("AntiPattern", hint)
        assert item.title == "Query the ontology before answering: a guess missed two of"
        assert [r.rsplit("/", 1)[1] for r in item.runs] == [blind.run_id]
        assert item.applies_to == ("http://w3id.org/owl-memory/examples/library",)
        export_pack(m, tmp_path / "p.jsonl")
    (line,) = [json.loads(x) for x in (tmp_path / "p.jsonl").read_text().splitlines() if item_id in x]
    assert line["provenance"]["source"] == "human" and line["provenance"]["run"].endswith(blind.run_id)
