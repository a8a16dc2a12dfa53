"""An independent check that a repair copied no value from another node.

A literal the repair added to a node is a suspect when another node of the input holds the same literal. The check
changes every other node's copy of it, two ways (digits moved one step; every letter and digit moved one step: one
of them still fits the pattern, length and datatype the original fitted), and repairs
that data again: a repair that copied the value now writes the changed one, a repair that derived or synthesized it
writes the same literal as before. Nothing of the repairer's own bookkeeping is read.
"""

from __future__ import annotations

from rdflib import Graph, Literal

from owl_memory.repair import repair


def copied(data: Graph, shapes: Graph, added: set, keep_values: bool = False) -> list[tuple]:
    """The added triples whose literal was copied from another node of `data` (see the module doc), sorted."""
    suspects = sorted(t for t in added if isinstance(t[2], Literal) and _held_elsewhere(data, t))
    found: set = set()
    for step in STEPS if suspects else ():
        changed, marks = _perturbed(data, {t[2] for t in suspects}, {t[0] for t in suspects}, step)
        again = repair(changed, shapes, keep_values=keep_values).added if marks else set()
        found |= {t for t in suspects if t[2] in marks and (t[0], t[1], marks[t[2]]) in again}
    return sorted(found)


def _held_elsewhere(data: Graph, t: tuple) -> bool:
    """True when a node other than the triple's subject holds its literal."""
    return any(s != t[0] for s in data.subjects(None, t[2]))


def _perturbed(data: Graph, values: set, owners: set, step) -> tuple[Graph, dict]:
    """A copy of `data` where every node but the owners holds a changed form of each value (`step` changes one
    character); value -> changed form (values with no changed form are left as they are)."""
    marks = {v: m for v in values if (m := _changed(v, step)) is not None}
    out = Graph()
    for s, p, o in data:
        out.add((s, p, marks[o] if o in marks and s not in owners else o))
    return out, marks


def _changed(value: Literal, step) -> Literal | None:
    """The same literal with `step` applied to each character; None when that changes nothing or is ill-formed."""
    text = "".join(step(c) for c in str(value))
    if text == str(value):
        return None
    out = Literal(text, lang=value.language, datatype=value.datatype)
    return None if out.ill_typed else out


def _rotated(c: str, ranges: tuple) -> str:
    """A character moved one step in the first of `ranges` ((first, size)) holding it, else as it is."""
    for first, size in ranges:
        if first <= c < chr(ord(first) + size):
            return chr(ord(first) + (ord(c) - ord(first) + 1) % size)
    return c


DIGITS, LETTERS = (("0", 10),), (("a", 26), ("A", 26))
STEPS = (lambda c: _rotated(c, DIGITS), lambda c: _rotated(c, DIGITS + LETTERS))  # the ways a copy is changed:
# digits moved (a pattern of fixed words still fits), every letter and digit moved (character classes and lengths
# still fit)
