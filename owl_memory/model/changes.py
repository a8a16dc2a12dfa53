"""Change sets: the triples a proposer, an agent or a repair wants added to and removed from a graph."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ChangeSet:
    """Triples to add to and remove from a graph (rdflib terms), and why it is empty when it is.

    Args:
        added: triples to add (not already in the graph, no blank nodes).
        removed: triples to remove (all in the graph).
        note: why the change set is empty, when it is.
    """

    added: tuple = ()
    removed: tuple = ()
    note: str = ""

    @property
    def size(self) -> int:
        """Number of triples changed."""
        return len(self.added) + len(self.removed)
