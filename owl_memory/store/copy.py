"""Copy a memory between backends (directory <-> SPARQL server) losslessly: same ids, triples and payloads."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import OWL, RDF
from rdflib.term import Node

from ..errors import InvalidItem
from ..model import ItemSpec
from ..resources import memory_ontology
from ..vocab import BLOB, ITEM, KINDS, OM, local_name
from .items import Rows, rows_of
from .memory import COPY_STATE, Memory
from .sparql_terms import integer


@dataclass(frozen=True)
class CopyReport:
    """What a copy moved: the source's items (with `contents`, how many this copy wrote, content included: the rest
    were there already, from a copy cut short), its triples, the other payloads it names (run trajectories), and the
    ids the destination's bound then archived."""

    items: int
    contents: int
    triples: int
    payloads: int
    archived: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        """The report as JSON-ready values (the CLI's --json output)."""
        return asdict(self) | {"archived": list(self.archived)}


def copy_memory(src: Memory, dst: Memory, batch: int = 1000) -> CopyReport:
    """Copy every item (with its own triples: counters, dates, links, archive flag), every other triple
    (runs, trajectories, provenance) and every payload the memory refers to from `src` into `dst`; then validate
    `dst`; a destination with a bound (max_items) then archives its least useful items, as every write does.
    `dst` is marked an incomplete copy from the first write until the copy finishes (Memory.incomplete_copy), so a
    copy cut short (a kill, a lost connection) is never taken for a whole memory; copying again finishes it.
    InvalidItem when the copy does not validate."""
    dst.require_writable()
    with dst.backend.transaction():
        dst.backend.add_triples(incomplete_mark(str(src.location)))
    g = src.to_graph()
    kinds = {OM[k] for k in KINDS}
    items = sorted({s for s, k in g.subject_objects(RDF.type)
                    if k in kinds and isinstance(s, URIRef) and s.startswith(str(ITEM))})
    stored = dst.backend.stored(str(i)[len(ITEM):] for i in items)
    todo = [i for i in items if str(i)[len(ITEM):] not in stored]
    for at in range(0, len(todo), batch):
        dst.backend.write_items([_item(src, g, node) for node in todo[at: at + batch]])
    rest = data_triples(g)
    for node in items:
        rest.remove((node, None, None))
    with dst.backend.transaction():
        dst.backend.add_triples(rest)
    payloads = _copy_payloads(src, dst, g)
    with dst.backend.transaction():
        dst.backend.remove_triples(COPY_STATE, OM.copyIncompleteFrom)
        dst.backend.remove_triples(COPY_STATE, RDF.type)
    report = dst.validate()
    if not report.conforms:
        raise InvalidItem("the copy does not validate at the destination: " + "; ".join(report.messages[:5]))
    return CopyReport(len(items), len(todo), len(g), payloads, tuple(dst.enforce_bound()))


def incomplete_mark(source: str) -> Graph:
    """The triples that mark a memory as an unfinished copy of `source`."""
    g = Graph(bind_namespaces="none")
    g.add((COPY_STATE, RDF.type, OM.CopyState))
    g.add((COPY_STATE, OM.copyIncompleteFrom, Literal(source)))
    return g


def data_triples(g: Graph) -> Graph:
    """The triples of a memory graph that are neither the memory ontology (whose blank nodes differ per store)
    nor an ontology header a store adds (owlready2 declares its graphs as owl:Ontology)."""
    tbox = set(memory_ontology().subjects()) | set(g.subjects(RDF.type, OWL.Ontology))
    out = Graph(bind_namespaces="none")
    for t in g:
        if not isinstance(t[0], BNode) and t[0] not in tbox:
            out.add(t)
    return out


def _item(src: Memory, g: Graph, node: URIRef) -> tuple[ItemSpec, Rows]:
    """An item's spec (what a backend indexes) and its stored triples, exactly as the source holds them."""
    own = Graph(bind_namespaces="none")
    for p, o in g.predicate_objects(node):
        own.add((node, p, o))
    kind = next(str(k).rsplit("#", 1)[-1] for k in own.objects(node, RDF.type) if str(k).rsplit("#", 1)[-1] in KINDS)
    one = {p: str(_required(own, node, p)) for p in (OM.title, OM.summary, OM.scope, OM.confidence, OM.contentRef)}
    spec = ItemSpec(kind, one[OM.title], one[OM.summary], src.blobs.load(one[OM.contentRef]),
                    applies_to=tuple(sorted(str(o) for o in own.objects(node, OM.appliesToOntology))),
                    tags=tuple(sorted(str(o) for o in own.objects(node, OM.tag))),
                    priority=integer(own.value(node, OM.priority)), confidence=float(one[OM.confidence]),
                    scope=one[OM.scope])
    if spec.id != str(node)[len(ITEM):]:
        raise InvalidItem(f"item {node} does not match its stored title, content and scope (id {spec.id}); "
                          "repair the source memory before copying it")
    return spec, rows_of(own)


def _required(own: Graph, node: URIRef, p: URIRef) -> Node:
    """The value of a property every item has (the memory shapes' minCount 1); InvalidItem when it lacks one."""
    value = own.value(node, p)
    if value is None:
        raise InvalidItem(f"item {node} has no {local_name(p)}; repair the source memory before copying it")
    return value


def _copy_payloads(src: Memory, dst: Memory, g: Graph) -> int:
    """Copy the payloads the graph names as blob IRIs (trajectories a run was derived from); returns how many."""
    n = 0
    for node in sorted({t for t in g.all_nodes() if isinstance(t, URIRef) and str(t).startswith(str(BLOB))}):
        key = "sha256:" + str(node)[len(BLOB):]
        try:
            ref = src.blobs.ref(key)
        except KeyError:
            continue
        dst.blobs.put(src.blobs.load(ref), ref.kind)
        n += 1
    return n
