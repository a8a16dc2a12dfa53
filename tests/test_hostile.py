"""The hostile-input corpus (tests/data/hostile/cases.yaml) via the CLI and the API: typed, one line, no write."""

import json
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from owl_memory import ItemSpec, Memory
from owl_memory.cli import main
from owl_memory.errors import InvalidItem, LoadError, OutputError, OwlMemoryError, UnknownItem
from owl_memory.rdfio import load_graph, read_text

DATA = Path(__file__).parent / "data" / "hostile"
CASES = yaml.safe_load((DATA / "cases.yaml").read_text(encoding="utf-8"))
MB = "x" * 1_000_000
PACK_LINE = {"kind": "Principle", "title": "Bind values", "summary": "Use it with user text.", "content": "x"}


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> tuple[Path, str]:
    """A memory with one item (copied for every case) and that item's id."""
    path = tmp_path_factory.mktemp("template") / "mem"
    with Memory(path) as m:
        i = m.add(ItemSpec("Principle", "Bind values never paste", "Use when a query takes user text.", "payload",
                           tags=("binding",)))
    return path, i


@pytest.fixture
def scratch(tmp_path, template) -> dict:
    """A fresh copy of the template memory, a scratch folder with the generated huge and deep Turtle files and a pack
    whose second line nests 100,000 lists."""
    mem = tmp_path / "mem"
    shutil.copytree(template[0], mem)
    tmp = tmp_path / "scratch"
    tmp.mkdir()
    prefix = "@prefix ex: <http://example.org/hostile#> .\n"
    rows = [f'ex:s{i} a ex:Person ; ex:age "{i}" .' for i in range(2000)]
    (tmp / "huge.ttl").write_text(prefix + "\n".join(rows) + f'\nex:big ex:note "{"x" * 5_000_000}" .\n'
                                  'ex:broken ex:p "unterminated .\n', encoding="utf-8")
    (tmp / "deep.ttl").write_text(prefix + "ex:a ex:p " + "[ ex:p " * 50_000 + "ex:o" + " ]" * 50_000 + " .\n")
    (tmp / "deep.jsonl").write_text(json.dumps(PACK_LINE) + "\n" + "[" * 100_000 + "]" * 100_000 + "\n")
    return {"mem": mem, "tmp": tmp, "id": template[1]}


def state(mem: Path) -> tuple:
    """What a write would change: the quad count of memory.sqlite3 and the payload keys of blobs.sqlite3."""
    with closing(sqlite3.connect(f"file:{mem / 'memory.sqlite3'}?mode=ro", uri=True)) as db:
        quads = db.execute("SELECT (SELECT count(*) FROM objs) + (SELECT count(*) FROM datas)").fetchone()[0]
    with closing(sqlite3.connect(f"file:{mem / 'blobs.sqlite3'}?mode=ro", uri=True)) as db:
        keys = {k for (k,) in db.execute("SELECT key FROM blobs")}
    return quads, keys


def fill(arg: str, scratch: dict) -> str:
    """A case argument with its placeholders filled in."""
    for key, value in (("{data}", str(DATA)), ("{tmp}", str(scratch["tmp"])), ("{id}", scratch["id"]),
                       ("{mb}", MB), ("{nul}", "\x00")):
        arg = arg.replace(key, value)
    return arg


def invoke(case: dict, scratch: dict, as_json: bool):
    """Run one case through the CLI in-process; the result and whether the memory or the scratch folder changed."""
    before, files = state(scratch["mem"]), set(scratch["tmp"].iterdir())
    memory = scratch["tmp"] / "fresh" if case.get("memory") == "fresh" else scratch["mem"]
    args = [fill(a, scratch) for a in case["args"]] + ["--memory", str(memory)] + (["--json"] * as_json)
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    return result, state(scratch["mem"]) != before, set(scratch["tmp"].iterdir()) - files


@pytest.mark.parametrize("as_json", [False, True], ids=["plain", "json"])
@pytest.mark.parametrize("case", [c for c in CASES if c["exit"] == 2], ids=lambda c: c["id"])
def test_bad_input_is_one_typed_line_exit_2_and_nothing_written(case, scratch, as_json):
    """Exit 2, exactly one stderr line naming the error type (a JSON object under --json), no write anywhere."""
    result, changed, new_files = invoke(case, scratch, as_json)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and len(lines[0]) < 1200, result.stderr[:500]
    if as_json:
        error = json.loads(lines[0])
        assert error["error"] == case["error"] and error["message"]
    else:
        assert lines[0].startswith(f"owl-memory: {case['error']}: ")
    assert result.stdout == ""
    assert not changed and not new_files


@pytest.mark.parametrize("case", [c for c in CASES if c["exit"] != 2], ids=lambda c: c["id"])
def test_hostile_but_valid_input_works(case, scratch):
    """Hostile text that is still valid input is taken literally: the expected exit, writes only where stated."""
    result, changed, new_files = invoke(case, scratch, as_json=True)
    assert result.exit_code == case["exit"], (result.stdout, result.stderr[-2000:])
    assert changed == case.get("writes", False)
    assert {f.name for f in new_files} == ({case["out"]} if "out" in case else set())
    json.loads(result.stdout)


def test_nul_payload_comes_back_exact_through_the_cli(scratch):
    """A content file holding NUL is stored and read back through `window` character for character."""
    runner, mem = CliRunner(), ["--memory", str(scratch["mem"]), "--json"]
    added = runner.invoke(main, ["add", "Principle", "Nul payload", "Use it.", "--content-file", str(DATA / "nul.txt"),
                                 *mem])
    item = json.loads(added.stdout)["id"]
    window = json.loads(runner.invoke(main, ["window", item, "--length", "512", *mem]).stdout)
    assert window["text"] == (DATA / "nul.txt").read_text(encoding="utf-8") and "\x00" in window["text"]


def test_a_real_process_exits_2_without_traceback(scratch):
    """`repair --out` into a missing folder in a real process: exit 2, one line, no traceback, nothing compiled."""
    case = next(c for c in CASES if c["id"] == "repair-out-into-missing-folder")
    before = state(scratch["mem"])
    args = [fill(a, scratch) for a in case["args"]] + ["--memory", str(scratch["mem"])]
    proc = subprocess.run([sys.executable, "-m", "owl_memory", *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr
    assert state(scratch["mem"]) == before


API_CASES = [
    ("malformed turtle", lambda m, t: load_graph(DATA / "malformed.ttl"), LoadError),
    ("non-utf8 turtle", lambda m, t: load_graph(DATA / "latin1.ttl"), LoadError),
    ("deeply nested turtle", lambda m, t: load_graph(t / "deep.ttl"), LoadError),
    ("huge broken turtle", lambda m, t: load_graph(t / "huge.ttl"), LoadError),
    ("non-utf8 text", lambda m, t: read_text(DATA / "latin1.txt"), LoadError),
    ("1 MB title", lambda m, t: m.add(ItemSpec("Principle", MB, "Use it.", "x")), InvalidItem),
    ("1 MB summary", lambda m, t: m.add(ItemSpec("Principle", "Huge summary", MB, "x")), InvalidItem),
    ("NUL in title", lambda m, t: m.add(ItemSpec("Principle", "Nul\x00title", "Use it.", "x")), InvalidItem),
    ("lone surrogate in title", lambda m, t: m.add(ItemSpec("Principle", "Bad \ud800 title", "Use it.", "x")),
     InvalidItem),
    ("priority 10^23", lambda m, t: m.add(ItemSpec("Principle", "Big priority", "Use it.", "x", priority=10**23)),
     InvalidItem),
    ("path-like id", lambda m, t: m.get("../../etc/passwd"), UnknownItem),
    ("path-like window id", lambda m, t: m.window("/etc/passwd"), UnknownItem),
    ("export into a missing folder", lambda m, t: m.export(t / "missing" / "x.ttl"), OutputError),
    ("export in an unknown format", lambda m, t: m.export(t / "x.ttl", format="no-such-format"), OutputError),
]


@pytest.mark.parametrize(("name", "call", "error"), API_CASES, ids=[c[0] for c in API_CASES])
def test_api_refuses_hostile_input_with_a_typed_error(name, call, error, scratch):
    """The same corpus through the library: the typed error (an OwlMemoryError), short message, nothing written."""
    before, files = state(scratch["mem"]), set(scratch["tmp"].iterdir())
    with Memory(scratch["mem"]) as m, pytest.raises(error) as caught:
        call(m, scratch["tmp"])
    assert isinstance(caught.value, OwlMemoryError) and len(str(caught.value)) < 2000
    assert state(scratch["mem"]) == before and set(scratch["tmp"].iterdir()) == files


def test_hostile_search_text_is_literal(scratch):
    """SPARQL and FTS5 syntax in search text are words: results, no error, and the stored item still found."""
    with Memory(scratch["mem"]) as m:
        for text in ("SELECT * WHERE { ?s ?p ?o } ; DROP ALL", 'title:x OR NEAR(a b) "unbalanced * ^ -', "\x00"):
            assert isinstance(m.search(text), list)
        assert [h.id for h in m.search("bind values")] == [scratch["id"]]


def test_a_deeply_nested_pack_line_is_a_load_error_naming_file_and_line(scratch):
    result = CliRunner().invoke(main, ["pack", "import", str(scratch["tmp"] / "deep.jsonl"), "--memory",
                                       str(scratch["mem"])], catch_exceptions=False)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.stderr[-500:]
    assert result.stderr.startswith(f"owl-memory: LoadError: {scratch['tmp'] / 'deep.jsonl'}:2: not a valid pack "
                                    "item: nested deeper than")
