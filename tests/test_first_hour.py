"""The first hour without a surprise: a read-only memory called read-only, a missing memory never created by a read,
out-of-range numbers refused or cut and said, empty results in words, SPARQL answers with their datatypes, refusals
that advise only what the command accepts, the ontology's own prefixes, an unfinished copy named, plain tables."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from rdflib import Graph

from owl_memory import ItemSpec, Memory
from owl_memory.agent.tools import tools
from owl_memory.cli import main
from owl_memory.errors import MemoryReadOnly, QueryRefused
from owl_memory.resources import shipped
from owl_memory.store import copy as copying

BWRAP = shutil.which("bwrap")
OWL_MEMORY = [sys.executable, "-m", "owl_memory"]
CURRICULUM = str(shipped("curricula", "library.yaml"))
HOSTILE = Path(__file__).parent / "data" / "hostile"


@pytest.fixture
def memory_path(tmp_path):
    """A memory with three items (one of them an exception) in a folder of its own."""
    path = tmp_path / "mem"
    with Memory(path) as m:
        rule = m.add(ItemSpec("Principle", "Bind values never paste", "Use when a query takes user text.", "bind",
                              tags=("binding",)))
        m.add(ItemSpec("Principle", "Page results with LIMIT", "Use when results are large.", "limit"))
        m.add(ItemSpec("Principle", "Bind values in tests", "Use in test code.", "t", scope="exception", refines=rule))
    return path


def read_only(path, *argv) -> subprocess.CompletedProcess:
    """Run `owl-memory ARGV` with the memory folder `path` mounted read-only (bubblewrap), as a read-only disk is."""
    cmd = [BWRAP, "--bind", "/", "/", "--ro-bind", str(path), str(path), "--dev", "/dev", "--proc", "/proc",
           *OWL_MEMORY, *argv]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=path.parent,
                          env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"})


@pytest.mark.skipif(BWRAP is None and not os.environ.get("OWL_MEMORY_REQUIRE_SANDBOX"),
                    reason="needs bubblewrap to mount the memory read-only")
@pytest.mark.slow
def test_every_command_that_would_write_a_read_only_memory_says_so_before_any_work(memory_path):
    before = sorted((p.name, p.stat().st_size) for p in memory_path.iterdir())
    m = str(memory_path)
    writes = [["add", "Principle", "Another rule", "Use it.", "--content", "x", "--memory", m],
              ["run", "What is om:MemoryItem?", "--lm", "scripted", "--memory", m],
              ["train", CURRICULUM, "--lm", "scripted", "--limit", "1", "--memory", m],
              ["pack", "import", "starter", "--memory", m],
              ["sprint", "--memory", m],
              ["sprint", "--agent", "--lm", "scripted", "--memory", m],
              ["repair", str(HOSTILE / "data.ttl"), "--shapes", str(HOSTILE / "shapes.ttl"), "--memory", m],
              ["copy", str(memory_path.parent / "elsewhere"), m]]
    with Memory(memory_path.parent / "elsewhere") as other:
        other.add(ItemSpec("Principle", "Elsewhere rule", "Use it.", "e"))
    for argv in writes:
        done = read_only(memory_path, *argv)
        assert done.returncode == 2, (argv, done.stdout[-500:], done.stderr[-1500:])
        assert done.stderr.startswith("owl-memory: MemoryReadOnly: ") and done.stderr.count("\n") == 1, done.stderr
        assert "damaged" not in done.stderr and "Traceback" not in done.stderr
    for argv in (["search", "bind", "--memory", m], ["show", "--memory", m, "--json", _first_id(memory_path)],
                 ["validate", "--memory", m]):
        done = read_only(memory_path, *argv)
        assert done.returncode == 0, (argv, done.stderr[-800:])
    assert sorted((p.name, p.stat().st_size) for p in memory_path.iterdir()) == before


def _first_id(path) -> str:
    """The id of the item "Bind values never paste" (its content is "bind")."""
    with Memory(path, create=False) as m:
        return next(h.id for h in m.search("bind") if h.title == "Bind values never paste")


def test_readonly_sqlite_is_never_reported_as_damage(memory_path):
    from owl_memory.store.sqlite_files import typed_error

    err = typed_error(__import__("sqlite3").OperationalError("attempt to write a readonly database"), memory_path)
    assert isinstance(err, MemoryReadOnly) and "damaged" not in str(err)


def test_mcp_on_a_missing_memory_is_memory_not_found_and_creates_nothing(tmp_path):
    typo = tmp_path / "no-such-memory"
    r = CliRunner().invoke(main, ["mcp", "--memory", str(typo)])
    assert r.exit_code == 2 and "MemoryNotFound" in r.output and not typo.exists()


@pytest.mark.parametrize("argv, message", [
    (["search", "bind", "-k", "0"], "-k must be from 1 to 50, got 0"),
    (["search", "bind", "-k", "-1"], "-k must be from 1 to 50, got -1"),
    (["window", "ID", "--length", "-20"], "--length must be at least 1, got -20"),
    (["window", "ID", "--start", "-1"], "--start must be at least 0, got -1"),
    (["sparql", "SELECT ?s WHERE { ?s ?p ?o }", "--limit", "0"], "--limit must be from 1 to 1000, got 0")])
def test_out_of_range_numbers_are_refused_with_their_range(memory_path, argv, message):
    argv = [a.replace("ID", _first_id(memory_path)) for a in argv]
    r = CliRunner().invoke(main, [*argv, "--memory", str(memory_path)])
    assert r.exit_code == 2 and message in r.output, r.output


def test_a_number_above_its_cap_is_cut_and_said(memory_path):
    r = CliRunner().invoke(main, ["search", "--memory", str(memory_path), "-k", "100", "--json"])
    assert r.exit_code == 0 and "-k 100 is above its cap of 50; using 50" in r.stderr
    assert len(json.loads(r.stdout)) == 3
    r = CliRunner().invoke(main, ["window", _first_id(memory_path), "--length", "10000", "--memory", str(memory_path)])
    assert r.exit_code == 0 and r.stdout == "bind\n"  # the whole payload: nothing was cut, so nothing is said


def test_empty_results_say_so_in_words_and_no_score_reads_as_broken(memory_path):
    run = CliRunner()
    none = run.invoke(main, ["search", "nothing-matches-this", "--memory", str(memory_path)])
    assert none.exit_code == 0 and none.stdout.strip() == "no items match"
    rows = run.invoke(main, ["sparql", "SELECT ?s WHERE { ?s <urn:none> ?o }", "--memory", str(memory_path)])
    assert rows.exit_code == 0 and rows.stdout.strip() == "(no rows)"
    hits = run.invoke(main, ["search", "bind values never paste", "--memory", str(memory_path)])
    header, first = hits.stdout.splitlines()[:2]
    assert header.split()[:2] == ["#", "id"] and "score" not in header and "0.0000" not in hits.stdout
    assert first.split()[0] == "1"


def test_sparql_json_keeps_datatypes(memory_path):
    q = ("PREFIX om: <http://w3id.org/owl-memory#> SELECT (COUNT(?i) AS ?n) (MAX(?c) AS ?c) (SAMPLE(?t) AS ?t) "
         "WHERE { ?i om:confidence ?c ; om:title ?t }")
    r = CliRunner().invoke(main, ["sparql", q, "--memory", str(memory_path), "--json"])
    n, confidence, title = json.loads(r.stdout)["rows"][0]
    assert n == 3 and isinstance(n, int) and confidence == 0.5 and isinstance(title, str)
    with Memory(memory_path, create=False) as m:
        assert m.sparql("ASK { ?s ?p ?o }").rows == ((True,),)


def test_a_refusal_advises_only_what_the_command_accepts(memory_path):
    with Memory(memory_path, create=False) as m:
        for query in ("SELECT * WHERE { SERVICE <http://x/sparql> { ?s ?p ?o } }",
                      "SELECT * FROM <http://x> { ?s ?p ?o }", "DELETE WHERE { ?s ?p ?o }",
                      "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }"):
            with pytest.raises(QueryRefused) as e:
                m.sparql(query)
            assert "CONSTRUCT" not in str(e.value).split(";", 1)[-1] and "SELECT" in str(e.value), str(e.value)


def test_ontology_stats_lists_only_the_prefixes_the_ontology_uses():
    ontology = Graph().parse(shipped("ontology", "owl-memory.ttl"))
    stats = {t.name: t for t in tools(ontology=ontology)}["ontology_stats"]()
    assert {"om", "owl", "rdfs", "prov"} <= set(stats["prefixes"])
    assert not {"brick", "csvw", "doap", "schema", "odrl"} & set(stats["prefixes"]), stats["prefixes"]


def _cut_copy(source, dst, monkeypatch) -> None:
    """Copy `source` into `dst` and kill the copy after the items, before the payloads and the end."""
    def cut(*_):
        raise KeyboardInterrupt
    monkeypatch.setattr(copying, "_copy_payloads", cut)
    with Memory(source, create=False) as a, Memory(dst) as b, pytest.raises(KeyboardInterrupt):
        copying.copy_memory(a, b)
    monkeypatch.undo()


def test_an_interrupted_copy_is_named_until_a_second_copy_finishes_it(memory_path, tmp_path, monkeypatch):
    dst = tmp_path / "copy"
    _cut_copy(memory_path, dst, monkeypatch)
    run = CliRunner()
    search = run.invoke(main, ["search", "bind", "--memory", str(dst), "--json"])
    assert search.exit_code == 0 and "incomplete copy" in search.stderr
    assert json.loads(search.stdout)["incomplete_copy"] == str(memory_path)
    validate = run.invoke(main, ["validate", "--memory", str(dst)])
    assert validate.exit_code == 1 and "incomplete copy of" in validate.stdout
    finish = run.invoke(main, ["copy", str(memory_path), str(dst)])
    assert finish.exit_code == 0 and "incomplete" not in finish.stderr  # the copy that finishes it does not warn
    again = run.invoke(main, ["search", "bind", "--memory", str(dst), "--json"])
    assert "incomplete" not in again.stderr and isinstance(json.loads(again.stdout), list)
    assert run.invoke(main, ["validate", "--memory", str(dst)]).exit_code == 0


@pytest.mark.parametrize("args", [["sparql", "SELECT ?s WHERE { ?s ?p ?o } LIMIT 1"], ["show", "{id}"],
                                  ["window", "{id}"], ["export", "{out}"], ["pack", "export", "{out}"],
                                  ["add", "Principle", "Another rule", "Use it.", "--content", "x"]],
                         ids=lambda a: " ".join(a[:2]) if a[0] == "pack" else a[0])
def test_every_command_reading_a_partial_copy_warns(args, memory_path, tmp_path, monkeypatch):
    dst = tmp_path / "copy"
    _cut_copy(memory_path, dst, monkeypatch)
    with Memory(dst, create=False) as m:
        first = m.search()[0].id
    args = [a.replace("{id}", first).replace("{out}", str(tmp_path / "out.ttl")) for a in args]
    for as_json in ([], ["--json"]):
        result = CliRunner().invoke(main, [*args, "--memory", str(dst), *as_json])
        assert result.exit_code == 0, result.output
        assert result.stderr == (f"owl-memory: warning: this memory is an incomplete copy of {memory_path}: it may "
                                 f"miss items; run `owl-memory copy {memory_path} {dst}` again to finish it\n")


def test_the_train_table_is_plain_and_fits_80_columns_when_piped(tmp_path):
    r = CliRunner().invoke(main, ["train", CURRICULUM, "--lm", "scripted", "--limit", "2", "--memory",
                                  str(tmp_path / "m")])
    lines = r.stdout.splitlines()
    assert r.exit_code == 0 and lines[0].split()[:3] == ["task", "ok", "ext"], r.stdout
    assert all(len(line) <= 80 for line in lines[:3]), lines
    assert not any(ch in r.stdout for ch in "│┃━─┏┓") and "…" not in lines[1]


def test_a_query_naming_unknown_iris_reads_without_writing(memory_path):
    import sqlite3

    def resources() -> int:
        with sqlite3.connect(memory_path / "memory.sqlite3") as db:
            return db.execute("SELECT count(*) FROM resources").fetchone()[0]
    before = resources()
    with Memory(memory_path, create=False) as m:
        assert m.sparql("SELECT ?s WHERE { ?s <urn:x:never-stored> <urn:x:also-never> }").rows == ()
    assert resources() == before
