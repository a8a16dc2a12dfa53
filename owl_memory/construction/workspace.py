"""The ontology construction workspace: base, working and shapes graphs, versions and deltas as blob handles."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from rdflib import Graph

from ..adapters import rdflib as rdf
from ..errors import InvalidItem, UnknownItem
from ..model import Ref
from ..rdfio import load_graph
from ..store import PayloadStore

SUMMARY_CHARS = 240


def nt_lines(triples: Iterable) -> list[str]:
    """Sorted, de-duplicated N-Triples lines (no newline) of some triples: the canonical text of a triple set."""
    graph = triples if isinstance(triples, Graph) else _holding(triples)
    return sorted({line for line in graph.serialize(format="nt").split("\n") if line})  # "\n" is escaped in terms


def nt_line(triple) -> str:
    """The N-Triples line (no newline) of one triple: the key that sorts triples in canonical order."""
    return nt_lines([triple])[0]


def _holding(triples: Iterable) -> Graph:
    """A graph holding some triples."""
    g = Graph()
    for t in triples:
        g.add(t)
    return g


def parse_lines(lines: Iterable[str]) -> Graph:
    """A Graph from N-Triples lines, keeping blank node labels exactly."""
    text = "\n".join(lines)
    return rdf.parse_text(text + "\n", "nt", same_labels=True) if text.strip() else Graph()


def graph_text(graph: Graph) -> str:
    """The canonical N-Triples text of a graph (sorted lines); equal text means the exact same triples."""
    lines = nt_lines(graph)
    return "\n".join(lines) + ("\n" if lines else "")


def copy_graph(graph: Graph) -> Graph:
    """A fresh Graph holding the same triples and exactly the same namespace bindings (a file's `dct:` stays `dct:`,
    not rdflib's default `dcterms:`)."""
    g = Graph(bind_namespaces="none")
    for prefix, ns in graph.namespaces():
        g.bind(prefix, ns, override=False, replace=False)
    for t in graph:
        g.add(t)
    return g


@dataclass(frozen=True)
class Delta:
    """One change of the working graph, stored as a "delta" handle.

    Args:
        ref: the DeltaRef (blob handle) holding added / removed N-Triples and the summary.
        parent: key of the version the change applies to.
        child: key of the version it produces.
        added: number of triples added.
        removed: number of triples removed.
        summary: at most SUMMARY_CHARS characters saying what changed.
    """

    ref: Ref
    parent: str
    child: str
    added: int
    removed: int
    summary: str

    def to_dict(self) -> dict:
        """JSON-compatible metadata of the delta (no triples)."""
        return {"delta": self.ref.key, "parent": self.parent, "child": self.child, "added": self.added,
                "removed": self.removed, "summary": self.summary}


def summarize(added: list[str], removed: list[str], note: str = "") -> str:
    """A capped one-line summary of a change: counts, a note and the first subjects touched."""
    subjects = sorted({ln.split(" ", 1)[0] for ln in added + removed})
    head = f"+{len(added)} -{len(removed)} triples" + (f" ({note})" if note else "")
    text = f"{head}; subjects: {', '.join(subjects[:5])}" + (" …" if len(subjects) > 5 else "")
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "…"


class Workspace:
    """Base, working and shapes graphs; every version an "ontology" Ref, every change a "delta" Ref.

    Args:
        store: a Memory (its payload store is used) or a PayloadStore.
        base: the seed ontology (path, Turtle text or Graph); never modified.
        shapes: the SHACL shapes graph (path, Turtle text or Graph); empty when None.
    """

    def __init__(self, store, base, shapes=None):
        self.blobs: PayloadStore = getattr(store, "blobs", store)
        self.base = copy_graph(load_graph(base))
        self.shapes = copy_graph(load_graph(shapes)) if shapes is not None else Graph()
        self.working = copy_graph(self.base)
        self.versions: list[Ref] = [self._put_version(self.working)]
        self.deltas: list[Delta] = []

    @property
    def head(self) -> Ref:
        """The handle of the current working version."""
        return self.versions[-1]

    def _put_version(self, graph: Graph) -> Ref:
        """Store a graph's canonical text as an "ontology" handle."""
        return self.blobs.put(graph_text(graph), kind="ontology")

    def apply(self, added: Iterable = (), removed: Iterable = (), note: str = "") -> Delta | None:
        """Add and remove triples as one delta and a new version; None when nothing changes."""
        add = [t for t in set(added) if t not in self.working]
        rem = [t for t in set(removed) if t in self.working]
        if not add and not rem:
            return None
        for t in rem:
            self.working.remove(t)
        for t in add:
            self.working.add(t)
        return self._record(nt_lines(add), nt_lines(rem), note)

    def _record(self, add: list[str], rem: list[str], note: str) -> Delta:
        """Store the new version and its delta; append both to the history."""
        parent, child = self.head, self._put_version(self.working)
        summary = summarize(add, rem, note)
        payload = {"parent": parent.key, "child": child.key, "added": add, "removed": rem, "summary": summary}
        ref = self.blobs.put(json.dumps(payload, sort_keys=True), kind="delta")
        delta = Delta(ref, parent.key, child.key, len(add), len(rem), summary)
        self.versions.append(child)
        self.deltas.append(delta)
        return delta

    def replace(self, graph: Graph, note: str = "") -> Delta | None:
        """Make the working graph equal to `graph` (as a delta of the difference)."""
        return self.apply(added=set(graph) - set(self.working), removed=set(self.working) - set(graph), note=note)

    def version(self, which: int | str | Ref) -> Ref:
        """The version handle for an index in the history, a key or a Ref."""
        if isinstance(which, int) and not isinstance(which, bool):
            if -len(self.versions) <= which < len(self.versions):
                return self.versions[which]
            raise UnknownItem(f"version {which} is not in this workspace's {len(self.versions)} versions; "
                              "use an index from 0 to len(versions) - 1")
        ref = self.blobs.ref(str(which) if isinstance(which, bool) else which)  # a bool is no index: an unknown key
        if ref.kind != "ontology":
            raise InvalidItem(f"handle {ref.key[:24]}… is a {ref.kind!r} handle, not an ontology version")
        return ref

    def load_version(self, which: int | str | Ref) -> Graph:
        """The exact graph of a version (blank node labels kept)."""
        return parse_lines(self.blobs.load(self.version(which)).splitlines())

    def undo(self, which: int | str | Ref) -> Ref:
        """Restore the working graph to a version exactly; the restore is itself recorded as a delta."""
        target = self.version(which)
        self.replace(self.load_version(target), note=f"undo to {target.key[7:19]}")
        return self.head

    def delta_triples(self, delta: Delta | Ref | str) -> tuple[Graph, Graph]:
        """The added and removed triples of a delta, as two Graphs."""
        ref = delta.ref if isinstance(delta, Delta) else self.blobs.ref(delta)
        payload = json.loads(self.blobs.load(ref))
        return parse_lines(payload["added"]), parse_lines(payload["removed"])

    def changed_nodes(self) -> set:
        """Subjects of every triple the workspace added or removed since the base."""
        return {s for s, _, _ in set(self.working) ^ set(self.base)}
