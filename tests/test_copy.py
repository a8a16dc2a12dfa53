"""`owl-memory copy`: a memory moves between a directory and an Oxigraph server and back, losslessly."""

import json

from click.testing import CliRunner

from owl_memory import ItemSpec, Memory
from owl_memory.cli import main
from owl_memory.store.copy import copy_memory, data_triples
from owl_memory.vocab import ITEM, OM

DC = "http://purl.org/dc/terms/"


def fill(m: Memory) -> dict:
    """A memory with links, an exception, a superseded and an archived item, counters and a trajectory payload."""
    trace = m.put_payload("step 1\x00 step 2 😀 " * 50, "trace")
    a = m.add(ItemSpec("Principle", "Bind values never paste", "Use when a query takes user text.", "a" * 900,
                       applies_to=(DC,), task_types=("qa",), priority=3, tags=("sparql",),
                       provenance={"run": "r1", "derived_from": trace.key}))
    b = m.add(ItemSpec("Principle", "Exception for constants", "Use when the value is a constant.", "b",
                       applies_to=(DC,), task_types=("qa",), scope="exception", refines=a))
    c = m.add(ItemSpec("AntiPattern", "Paste user text", "Use when never.", "c", applies_to=(DC,)))
    d = m.add(ItemSpec("Procedure", "Old procedure", "Use when old.", "d", applies_to=(DC,)))
    m.link(a, "conflictsWith", c)
    m.supersede(d, a)
    m.archive(c)
    m.record_use(a, True)
    m.record_use(a, False)
    return {"ids": [a, b, c, d], "trace": trace}


def same(x: Memory, y: Memory, ids: list, trace) -> None:
    """Both memories answer every read the same way."""
    assert len(x) == len(y) == len(ids)
    for i in ids:
        assert x.get(i) == y.get(i)
        assert x.window(i, 5, 100) == y.window(i, 5, 100)
    for q in ({"ontology": DC}, {"ontology": DC, "task_type": "qa"}, {"kinds": ["antipattern"]}, {}):
        assert x.search(**q, k=10) == y.search(**q, k=10)
    assert x.payload_window(trace, 3, 40) == y.payload_window(trace, 3, 40)
    assert set(data_triples(x.to_graph())) == set(data_triples(y.to_graph()))


def test_copy_directory_to_server_and_back(tmp_path, server_url):
    with Memory(tmp_path / "a") as a:
        made = fill(a)
        with Memory(server_url) as s:
            assert copy_memory(a, s).items == 4
            same(a, s, made["ids"], made["trace"])
            with Memory(tmp_path / "b") as b:
                assert copy_memory(s, b).payloads == 1
                same(a, b, made["ids"], made["trace"])


def test_cli_copy_server_to_directory(tmp_path, server_url):
    with Memory(server_url) as s:
        made = fill(s)
    result = CliRunner().invoke(main, ["copy", server_url, str(tmp_path / "b"), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["items"] == 4
    again = CliRunner().invoke(main, ["copy", server_url, str(tmp_path / "b"), "--json"])
    assert again.exit_code == 0 and json.loads(again.output)["items"] == 4
    with Memory(server_url) as s, Memory(tmp_path / "b") as b:
        same(s, b, made["ids"], made["trace"])


def test_copy_takes_an_item_without_a_priority(tmp_path):
    """The shapes let an item have no om:priority (a server memory written by another tool, an older memory); its
    copy ranks it at priority 0, as its source does."""
    with Memory(tmp_path / "a") as a:
        i = a.add(ItemSpec("Principle", "Bind values never paste", "Use when a query takes user text.", "a",
                           applies_to=(DC,)))
        with a.backend.transaction():
            a.backend.remove_triples(ITEM[i], OM.priority)
        assert a.validate().conforms and a.get(i).priority == 0
        with Memory(tmp_path / "b") as b:
            assert copy_memory(a, b).items == 1
            assert b.validate().conforms
            assert b.get(i) == a.get(i) and [h.id for h in b.search(ontology=DC)] == [i]


def test_copy_says_it_copied_the_item_contents(tmp_path):
    with Memory(tmp_path / "a") as a:
        a.add(ItemSpec("Principle", "Bind values never paste", "Use when a query takes user text.", "the content"))
    result = CliRunner().invoke(main, ["copy", str(tmp_path / "a"), str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("copied 1 item with their contents, ") and "0 payloads" not in result.output
    assert "0 other payloads (run trajectories)" in result.output
    again = CliRunner().invoke(main, ["copy", str(tmp_path / "a"), str(tmp_path / "b"), "--json"])
    assert {k: json.loads(again.output)[k] for k in ("items", "contents", "payloads")} == \
        {"items": 1, "contents": 0, "payloads": 0}  # the second copy found the item and its content there
    with Memory(tmp_path / "b") as b:
        assert b.window(b.search()[0].id, 0, 100).text == "the content"
