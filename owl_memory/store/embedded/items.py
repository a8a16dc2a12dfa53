"""The items of an embedded memory in its quadstore: which are stored, their triples in and out, search cards, use
counters and the lookup by violation signature."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import cast

from rdflib import Graph, Literal, URIRef
from rdflib.namespace import RDF, XSD
from rdflib.term import Identifier, Node

from ...model import Card, UseCounts
from ...vocab import ITEM, KINDS, OM
from ..items import COUNTERS, Row, kind_of, unknown_item
from .world import World

Value = int | float | str  # a data value as the quadstore's datas table holds it (adapters.owlready2: numbers, texts)


class Items:
    """Reads and writes of items on an open graph file (writes run inside the memory's write transaction).

    Args:
        world: the open graph file.
    """

    def __init__(self, world: World):
        self.store, self.terms, self.context = world.quadstore, world.terms, world.context
        # the property ids a search card reads (looked up once: rdflib builds a new term per attribute access)
        self.card_terms = tuple(self.terms[t] for t in (OM.title, OM.summary, OM.priority, OM.confidence, RDF.type,
                                                        OM.appliesToOntology, OM.conflictsWith, OM.aboutClass,
                                                        OM.aboutProperty))

    def stored(self, ids: Iterable[str]) -> set[str]:
        """The ids among `ids` that are stored items (a kind among their types)."""
        prefix, ids = str(ITEM), list(dict.fromkeys(ids))
        found: dict[str, int] = {}
        for at in range(0, len(ids), 500):
            found.update(self.store.node_ids([prefix + i for i in ids[at: at + 500]]))
        typed = self.store.typed(list(found.values()), self.terms[RDF.type], [self.terms[OM[k]] for k in KINDS])
        return {i for i in ids if found.get(prefix + i) in typed}

    def insert(self, triples: Iterable[tuple[Node, Node, Node]], ids: dict[Node, int] | None = None) -> None:
        """Insert triples (a triple already present stays as it is); `ids`: a write's memo of term ids (new_ids)."""
        self.store.insert(triples, self.context, self.new_ids() if ids is None else ids)

    def insert_rows(self, rows: Sequence[Row], ids: dict[str, int]) -> None:
        """Insert item rows (store.items.Row), their IRIs' ids made at once; `ids`: the write's memo (memo)."""
        self.store.made_ids((t for s, p, o, d in rows for t in (s, p, d if d is not None else str(o))), ids)
        self.store.insert_rows(rows, self.context, ids)

    def memo(self) -> dict[str, int]:
        """A write's memo of quadstore ids by IRI text, holding the memory ontology's terms."""
        return {str(t): i for t, i in self.terms.items()}

    def new_ids(self) -> dict[Node, int]:
        """A write's memo of quadstore ids, holding the memory ontology's terms (each other term looked up once)."""
        return {t: i for t, i in self.terms.items()}

    def remove(self, subject: URIRef, predicate: URIRef, obj: Identifier | None = None) -> None:
        """Delete (subject, predicate, obj), or every value of (subject, predicate)."""
        self.store.remove(subject, predicate, obj)

    def describe(self, nodes: Iterable[URIRef]) -> Graph:
        """Stored triples of the item nodes, rdf:type triples of the other nodes."""
        g = Graph(bind_namespaces="none")
        for node in nodes:
            s = self.store.storid(node) if isinstance(node, URIRef) else None
            if s is not None:
                g += self.store.triples(s, None if str(node).startswith(str(ITEM)) else RDF.type)
        return g

    def cards(self, ids: Sequence[str]) -> list[Card]:
        """Search cards, in the order of `ids`, read straight from the quadstore tables (three queries for all)."""
        if not ids:
            return []
        title, summary, priority, confidence, *linked = self.card_terms
        prefix = str(ITEM)
        node = self.store.node_ids([prefix + i for i in ids])
        nodes = [node[prefix + i] for i in ids]
        one: dict[int, dict[int, Value]] = {n: {} for n in nodes}
        data = cast(list[tuple[int, int, Value]],  # the datas table holds numbers and texts (owlready2._stored)
                    self.store.data_rows(nodes, (title, summary, priority, confidence)))
        for n, p, o in data:
            one[n].setdefault(p, o)
        links: dict[tuple[int, int], list[str]] = {}
        for n, p, o in self.store.link_rows(nodes, linked):
            links.setdefault((n, p), []).append(o)
        kind, ontology, conflicts, about_class, about_property = linked
        out = []
        for i, n in zip(ids, nodes, strict=True):
            values = one[n]
            out.append(Card(i, kind_of(i, links.get((n, kind), ())), str(values[title]), str(values[summary]),
                            tuple(sorted(links.get((n, ontology), ()))), int(values.get(priority, 0)),
                            float(values[confidence]), tuple(sorted(_item_ids(links.get((n, conflicts), ())))),
                            tuple(sorted(links.get((n, about_class), ()))),
                            tuple(sorted(links.get((n, about_property), ())))))
        return out

    def with_signature(self, signature: str) -> list[str]:
        """Ids of live items with this violation signature (one indexed lookup on the data table)."""
        iris = self.store.live_with_value(self.terms[OM.violationSignature], str(signature),
                                          self.terms[OM.supersedes], self.terms[OM.archived])
        return sorted(_item_ids(iris))

    def count_use(self, id: str, success: bool | None) -> UseCounts:
        """Increment the counters in place (typed xsd:nonNegativeInteger values stay typed)."""
        s = self.store.storid(ITEM[id])
        if s is None:
            raise unknown_item(id)
        bumps = {"use_count": 1, "success_count": int(success is True), "failure_count": int(success is False)}
        out: dict[str, int] = {}
        for key, prop in COUNTERS.items():
            p = self.terms[prop]
            value = self.store.value(s, p)
            out[key] = int(0 if value is None else value) + bumps[key]
            if value is None:
                self.insert([(ITEM[id], prop, Literal(out[key], datatype=XSD.nonNegativeInteger))])
            elif bumps[key]:
                self.store.set_value(s, p, out[key])
        return UseCounts(**out)

    def all_triples(self) -> Graph:
        """The whole store (ontology and items) as an rdflib Graph."""
        g = Graph()
        g.bind("om", OM)
        g.bind("item", ITEM)
        for t in self.store.all_triples():
            g.add(t)
        return g


def _item_ids(iris: Iterable[str]) -> list[str]:
    """Item ids of item IRIs (other IRIs dropped)."""
    return [str(i)[len(str(ITEM)):] for i in iris if str(i).startswith(str(ITEM))]
