"""Titles, summaries and tags refuse bidirectional and zero-width characters (Trojan Source): the item names the
character and its position, and the memory shapes refuse the same set whatever wrote the triples."""

import pytest
from rdflib import Graph, Literal
from rdflib.namespace import RDF, XSD

from owl_memory import ItemSpec, Memory
from owl_memory.errors import InvalidItem
from owl_memory.model.items import INVISIBLE
from owl_memory.store.validation import check
from owl_memory.vocab import ITEM, OM

S, SHA = ITEM["0123456789abcdef"], "a" * 64
CHARS = [chr(c) for c in range(0x600, 0x2100) if INVISIBLE.match(chr(c))] + ["\ufeff"]


def item(prop, text) -> Graph:
    """A minimal valid item whose `prop` (title, summary or tag) is `text`."""
    g = Graph()
    values = {OM.title: "Bind values never paste", OM.summary: "Use when a query takes user text.", prop: text}
    for p, o in [(RDF.type, OM.Principle), (OM.title, Literal(values[OM.title])),
                 (OM.summary, Literal(values[OM.summary])), (OM.scope, Literal("general")),
                 (OM.confidence, Literal(0.5, datatype=XSD.double)), (OM.priority, Literal(1, datatype=XSD.integer)),
                 (OM.contentRef, Literal(f"sha256:{SHA}")), (OM.contentHash, Literal(SHA))]:
        g.add((S, p, o))
    if prop == OM.tag:
        g.add((S, OM.tag, Literal(text)))
    return g


def test_the_refused_set_covers_every_bidi_control_and_zero_width_character():
    assert {"\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u200e",
            "\u200f", "\u061c", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"} <= set(CHARS)
    assert not INVISIBLE.search("Bind values, never paste: é ü ß 漢字 עברית العربية 😀")


@pytest.mark.parametrize("field", ["title", "summary", "tag"])
def test_an_item_names_the_character_and_its_position(field):
    for char in CHARS:
        text = f"Safe{char}word"
        with pytest.raises(InvalidItem) as e:
            ItemSpec("Principle", text if field == "title" else "Fine title",
                     text if field == "summary" else "Use when testing.", "c", tags=(text,) if field == "tag" else ())
        assert f"{field}: character U+{ord(char):04X}" in str(e.value) and "position 4" in str(e.value)


@pytest.mark.parametrize("prop", [OM.title, OM.summary, OM.tag], ids=["title", "summary", "tag"])
def test_the_shapes_refuse_the_same_characters(prop):
    assert check(item(prop, "Safe word")).conforms
    for char in CHARS:
        result = check(item(prop, f"Safe{char}word"))
        assert not result.conforms and any("bidirectional or zero-width" in m for m in result.messages), hex(ord(char))


def test_nothing_is_stored_and_payloads_keep_any_character(tmp_path, fresh_memory):
    with Memory(fresh_memory(tmp_path / "m")) as m:
        with pytest.raises(InvalidItem):
            m.add(ItemSpec("Principle", "Looks \u202eesrever", "Use when testing.", "c"))
        i = m.add(ItemSpec("Principle", "Payloads keep everything", "Use when testing.", "a\u202eb\u200bc"))
        assert len(m) == 1 and m.window(i).text == "a\u202eb\u200bc"
