"""ItemSpec (typed items, JSON round-trip, stable id) and Memory.add_many (bulk, one transaction per batch)."""

import json

import pytest

from owl_memory import InvalidItem, ItemSpec, UnknownItem
from owl_memory.model import item_id

PROV_O = "http://www.w3.org/ns/prov#"


def spec(n: int, **kw) -> ItemSpec:
    """The n-th small test item."""
    return ItemSpec("procedure", f"Step {n} of the bulk load", "Use when loading many items.", f"body {n}",
                    applies_to=[PROV_O], task_types=["bulk load"], tags=[f"t{n % 3}"], priority=n % 4, **kw)


def test_spec_normalizes_fields_and_round_trips_through_json():
    s = ItemSpec("anti-pattern", "Never paste user text", "Use when building queries.", "body",
                 applies_to=PROV_O, tags=["a", "", "b"], priority="3", confidence="0.25",
                 provenance={"run": "r1"}, action_schema={"operator": "x"})
    assert s.kind == "AntiPattern" and s.applies_to == (PROV_O,) and s.tags == ("a", "b")
    assert s.priority == 3 and s.confidence == 0.25
    assert s.id == item_id("Never paste user text", "body", "general")
    back = ItemSpec.from_dict(json.loads(json.dumps(s.to_dict())))
    assert back == s and back.id == s.id


def test_bad_specs_raise_invalid_item_with_what_to_change():
    with pytest.raises(InvalidItem, match="unknown kind"):
        ItemSpec("Rule", "t", "s.", "c")
    with pytest.raises(InvalidItem, match="priority must be an integer"):
        ItemSpec("Principle", "t", "s.", "c", priority="high")
    with pytest.raises(InvalidItem, match="unknown item fields"):
        ItemSpec.from_dict({"kind": "Principle", "title": "t", "summary": "s.", "content": "c", "colour": "red"})
    with pytest.raises(InvalidItem, match="needs kind, title"):
        ItemSpec.from_dict({"kind": "Principle"})


def test_add_many_stores_every_item_once_and_returns_ids_in_order(memory):
    specs = [spec(n) for n in range(25)]
    ids = memory.add_many(specs + specs[:5], batch=10)
    assert ids == [s.id for s in specs + specs[:5]] and len(memory) == 25
    assert memory.get(ids[7]).task_types == ("bulk-load",) and memory.window(ids[7]).text == "body 7"
    assert {h.id for h in memory.search(task_type="bulk load", k=50)} == set(ids)
    assert memory.validate().conforms


def test_add_many_links_to_items_of_the_same_batch(memory):
    rule = spec(1)
    exception = spec(2, scope="exception", refines=rule.id)
    memory.add_many([rule, exception])
    assert memory.get(rule.id).exceptions == (exception.id,)
    assert memory.validate(ids=[rule.id, exception.id]).conforms


def test_a_bad_item_in_a_batch_is_named_and_nothing_of_the_batch_is_stored(memory):
    first = memory.add_many([spec(0)])
    bad = ItemSpec("Principle", "one two three four five six seven eight nine ten eleven", "s.", "c")
    with pytest.raises(InvalidItem, match="one two three.*1 to 10 words"):
        memory.add_many([spec(1), bad, spec(2)])
    with pytest.raises(UnknownItem):
        memory.add_many([spec(3, refines="0123456789abcdef")])
    assert len(memory) == 1 and [h.id for h in memory.search(k=10)] == first
    with pytest.raises(InvalidItem, match="ItemSpec"):
        memory.add({"kind": "Principle"})


def test_an_items_rows_are_its_graphs_triples_as_plain_values():
    from datetime import datetime, timezone

    from owl_memory.store.items import graph_of, item_graph, item_rows, rows_of

    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    s = spec(3, scope="exception", refines="0123456789abcdef", provenance={"run": "r 1", "derived_from": "sha256:" +
                                                                         "ab" * 32}, signature="sh:MinCount on x")
    g = item_graph(s, when)
    assert sorted(rows_of(g), key=repr) == sorted(item_rows(s, when), key=repr)
    assert set(graph_of(rows_of(g))) == set(g) and len(g) == len(item_rows(s, when))


def test_a_batch_larger_than_the_postings_delta_ranks_as_small_batches_do(memory, tmp_path):
    from owl_memory import Memory
    from owl_memory.store.embedded import postings

    specs = [spec(n) for n in range(700)]
    memory.add_many(specs[:5])  # small: its postings wait in the delta
    memory.add_many(specs[5:], batch=700, validate=False)  # its (token, item) pairs alone fill the delta
    assert memory.backend.db.execute("SELECT count(*) FROM om_df_delta").fetchone()[0] < postings.FOLD
    with Memory(tmp_path / "small") as small:
        small.add_many(specs, batch=10, validate=False)  # every batch through the delta, folded when due
        for text in ("step bulk load", "step 17 of the bulk load", "of 333", "t1 loading"):
            assert [(h.id, h.score) for h in memory.search(text, k=30)] == \
                [(h.id, h.score) for h in small.search(text, k=30)], text
    assert len(memory) == 700
