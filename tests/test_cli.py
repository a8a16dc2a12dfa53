"""The CLI: every command answers --help with an example, bad input exits 2 and writes nothing."""

import json

import pytest
from click.testing import CliRunner

from owl_memory import Memory
from owl_memory.cli import main


@pytest.fixture
def run():
    """Invoke the CLI in-process; returns the click Result."""
    runner = CliRunner()
    return lambda *args: runner.invoke(main, [str(a) for a in args])


def test_every_command_answers_help_with_an_example(run):
    assert run("--help").exit_code == 0
    for name in main.commands:
        result = run(name, "--help")
        assert result.exit_code == 0 and "Example:" in result.output, name


def test_add_search_show_window_roundtrip(run, tmp_path):
    mem = tmp_path / "m"
    added = run("add", "Principle", "Bind values never paste", "Use when a query takes user text.",
                "--content", "Always bind. " * 100, "--applies-to", "http://purl.org/dc/terms/", "--task-type",
                "annotation", "--memory", mem, "--json")
    assert added.exit_code == 0, added.output
    item = json.loads(added.output)["id"]
    hits = json.loads(run("search", "bind values", "--ontology", "http://purl.org/dc/terms/", "--memory", mem,
                          "--json").output)
    assert [h["id"] for h in hits] == [item]
    shown = json.loads(run("show", item, "--memory", mem, "--json").output)
    assert shown["title"] == "Bind values never paste" and "Always bind" not in json.dumps(shown)
    window = json.loads(run("window", item, "--length", 100000, "--memory", mem, "--json").output)
    assert len(window["text"]) == 512


def test_bad_input_exits_2_with_one_line_and_writes_nothing(run, tmp_path):
    mem = tmp_path / "m"
    bad = run("add", "Principle", "one two three four five six seven eight nine ten eleven", "s.", "--content",
              "x", "--memory", mem)
    assert bad.exit_code == 2 and "1 to 10 words" in bad.output
    assert run("add", "Wizard", "t", "s.", "--content", "x", "--memory", mem).exit_code == 2
    assert run("show", "ffffffffffffffff", "--memory", mem).exit_code == 2
    assert run("window", "nope", "--memory", mem).exit_code == 2
    with Memory(mem) as m:
        assert len(m) == 0


def test_export_and_validate(run, tmp_path):
    mem = tmp_path / "m"
    run("add", "Procedure", "Walk the class tree", "Use when listing subclasses.", "--content", "x", "--memory", mem)
    assert run("validate", "--memory", mem, "--json").exit_code == 0
    out = tmp_path / "memory.ttl"
    assert run("export", out, "--memory", mem).exit_code == 0 and "Walk the class tree" in out.read_text()


def test_demo_builds_searches_and_reads_a_capped_window(run, tmp_path):
    result = run("demo", "--memory", tmp_path / "demo", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["items"] >= 30
    top = report["searches"]["'creator agent'"][0]
    assert top["title"] == "dcterms:creator values are Agent"
    assert len(report["window"]["text"]) <= 160
