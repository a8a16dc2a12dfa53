"""Memory writes, reads, caps, export and crash safety."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from rdflib import Graph

from owl_memory import InvalidItem, ItemSpec, Memory, UnknownItem
from owl_memory.model import RepairDecision, item_id
from owl_memory.store.validation import check

PROV_O = "http://www.w3.org/ns/prov#"
BIG = "payload-" * 2000  # 16,000 characters


def add_rule(m, title="Bind values never paste", content=BIG, **kw):
    """Add a Principle with sensible defaults."""
    return m.add(ItemSpec("Principle", title, "Use when a SPARQL query takes user text.", content,
                 applies_to=[PROV_O], task_types=["cq answering"], **kw))


def test_add_is_idempotent_and_id_is_stable(memory):
    a = add_rule(memory, priority=3)
    before = memory.get(a)
    assert add_rule(memory, priority=9) == a  # same title + content + scope: same id, nothing changes
    assert memory.get(a) == before and len(memory) == 1
    assert a == item_id("  bind VALUES never   paste ", BIG, "general")
    assert len(a) == 16 and int(a, 16) >= 0


def test_scope_changes_the_id(memory):
    a = add_rule(memory)
    b = add_rule(memory, scope="exception", refines=a)
    assert a != b


def test_invalid_item_raises_value_error_with_shacl_message_and_stores_nothing(memory):
    with pytest.raises(ValueError, match="1 to 10 words") as err:
        add_rule(memory, title="one two three four five six seven eight nine ten eleven")
    assert isinstance(err.value, InvalidItem)
    with pytest.raises(InvalidItem, match="confidence"):
        add_rule(memory, confidence=1.5)
    with pytest.raises(InvalidItem, match="unknown kind"):
        memory.add(ItemSpec("Rule", "t", "s.", "c"))
    assert len(memory) == 0 and memory.search() == []
    assert memory.blobs.db.execute("SELECT count(*) FROM blobs").fetchone()[0] == 0


def test_get_returns_metadata_and_compiled_fields_never_content(memory):
    run = memory.add(ItemSpec("Episode", "Repair sprint one", "Records one repair run.", "trace text",
                     provenance={"run": "sprint-1", "derived_from": "sha256:" + "b" * 64}))
    op = memory.add(ItemSpec("RepairOperator", "Add the missing class", "Use when sh:class fails on a focus node.", BIG,
                    signature="ClassConstraintComponent|ex:p|IRI", action_schema={"operator": "add_type"},
                    verification_hook="ASK { ?s a ?c }", grounded_by=[run]))
    got = memory.get(op)
    assert got.kind == "RepairOperator" and got.action_schema == RepairDecision("add_type")
    assert got.grounded_by == (run,) and got.size == len(BIG)
    assert "payload-" not in repr(got)
    assert memory.get(run).runs == ("http://w3id.org/owl-memory/run/sprint-1",)


@pytest.mark.parametrize("bad", ["0000000000000000", "nope", "'; DROP TABLE objs; --", "", "A" * 5000])
def test_unknown_id_is_a_key_error(memory, bad):
    with pytest.raises(KeyError) as err:
        memory.get(bad)
    assert isinstance(err.value, UnknownItem) and "search" in str(err.value)
    with pytest.raises(UnknownItem):
        memory.window(bad)


def test_window_is_capped(tmp_path):
    with Memory(tmp_path / "m", max_read=100) as m:
        a = add_rule(m)
        w = m.window(a, 10, 10_000)
        assert len(w.text) == 100 and (w.start, w.end, w.size) == (10, 110, len(BIG))
        assert m.window(a, len(BIG) - 5, 50).text == BIG[-5:]
        assert m.window(a, 10 ** 9, 50).text == ""


def test_record_use_counts_and_supersede_hides(memory):
    a = add_rule(memory)
    b = add_rule(memory, title="Bind values with initBindings")
    assert memory.record_use(a, True).to_dict() == {"use_count": 1, "success_count": 1, "failure_count": 0}
    assert memory.record_use(a, False).failure_count == 1
    memory.supersede(a, b)
    assert [h.id for h in memory.search(ontology=PROV_O)] == [b]
    assert memory.get(b).supersedes == (a,)
    with pytest.raises(UnknownItem):
        memory.supersede(a, "ffffffffffffffff")


def test_export_writes_rdf_that_validates_against_the_shapes(memory, tmp_path):
    a = add_rule(memory)
    add_rule(memory, title="Exception for constants", scope="exception", refines=a)
    out = memory.export(tmp_path / "memory.ttl")
    g = Graph().parse(out)
    assert check(g).conforms
    assert memory.validate().conforms


def test_reopening_keeps_items(tmp_path):
    with Memory(tmp_path / "m") as m:
        a = add_rule(m)
    with Memory(tmp_path / "m") as m:
        assert m.get(a).title == "Bind values never paste" and len(m) == 1


WRITER = textwrap.dedent("""
    import sys
    from owl_memory import ItemSpec, Memory
    m = Memory(sys.argv[1])
    for i in range(100000):
        item = m.add(ItemSpec("Procedure", f"Step {i} of the loop", "Use when testing crash safety.",
                              "payload " * 200 + str(i), applies_to=["http://www.w3.org/ns/prov#"],
                              task_types=["crash"], tags=[f"t{i % 7}"]))
        print(item, flush=True)
""")


def test_sigkill_in_a_loop_of_adds_keeps_every_returned_id(tmp_path):
    path = tmp_path / "m"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True)
    returned = []
    deadline = time.monotonic() + 60
    while len(returned) < 40 and time.monotonic() < deadline:
        returned.append(proc.stdout.readline().strip())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    returned += [line.strip() for line in proc.stdout.read().splitlines() if line.strip()]
    assert len(returned) >= 40
    with Memory(path) as m:
        for i in returned:
            assert m.get(i).kind == "Procedure"
            assert m.window(i, 0, 8).text == "payload "
        assert m.validate().conforms
        assert len(m) >= len(returned)
        m.add(ItemSpec("Principle", "Still writable after a crash", "Use when checking recovery.", "ok"))


def test_an_add_checks_again_under_the_write_lock_only_when_another_writer_committed(memory, monkeypatch):
    """An item is validated before the write lock; under it, it is checked again when another connection committed
    meanwhile and changed what it is validated against (here: the rule it refines), and not when none committed."""
    from owl_memory.store import memory as memory_module

    rule = add_rule(memory)
    calls, between = [], []
    real = memory_module.check_batch

    def spy(backend, items):
        """Count the checks; run what another writer does between the first check and the write lock."""
        calls.append([spec.title for spec, _ in items])
        out = real(backend, items)
        while between:
            between.pop()()
        return out

    monkeypatch.setattr(memory_module, "check_batch", spy)
    first = add_rule(memory, title="First exception", scope="exception", refines=rule)
    assert calls == [["First exception"]]
    with Memory(memory.backend.path) as other:
        between.append(lambda: other.archive(rule))
        second = add_rule(memory, title="Second exception", scope="exception", refines=rule)
    assert calls[1:] == [["Second exception"]] * 2
    assert memory.get(rule).archived and {first, second} <= set(memory.backend.stored([first, second]))
