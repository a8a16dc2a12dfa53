"""The task-family registry: every family as a typed `Family`, registered by the `@family` decorator of the module
that defines it (importing owl_memory.learning.families registers them all).

A family is one procedure a memory can carry from entity to entity and from ontology to ontology: a graph pattern
that binds `?answer` from bound values (`?entity`, `?property`, ...), and a function that asks the question in
words. Its gold is that pattern under a VALUES block of the bound values (written by rdflib's n3(), never pasted
text); its candidates are the same pattern with nothing bound.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from rdflib.term import Node

PREFIXES = {"rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#", "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
            "owl": "http://www.w3.org/2002/07/owl#", "skos": "http://www.w3.org/2004/02/skos/core#"}
ENGLISH = '(lang({0}) = "" || langMatches(lang({0}), "en"))'  # an untagged or English literal, as a FILTER test
LIST_MEMBER = "(owl:unionOf/rdf:rest*/rdf:first)?"  # a class itself, or the members of the union it is


@dataclass(frozen=True)
class Family:
    """One task family.

    Args:
        name: its name (the task type of its tasks).
        group: the kind of procedure (hierarchy, schema, annotation, count, axiom); a tag of its tasks.
        needs: what an ontology must hold for the family to make a task, in words (for errors and docs).
        where: the graph pattern binding ?answer from the variables of `binds`.
        ask: (view, bindings) -> the question, naming the bound terms as a reader would.
        binds: the variables bound per task, in order.
        about: the variables whose IRIs a task asks about (the entity split keeps them apart); "answer" for a
            family whose question names its answer indirectly (by label).
        count: the gold is the number of answers, not the answers.
        keep: (view, bindings, answers) -> whether a candidate makes a fair task; None keeps every one.
        contrast: a family whose answer, for the same bindings, must differ (a transitive question whose answer is
            the direct one tests nothing more).
        listing: the pattern that finds candidates when `where` cannot run unbound (it binds every variable of
            `binds` and ?answer); None means `where`.
    """

    name: str
    group: str
    needs: str
    where: str
    ask: Callable[[object, Mapping[str, Node]], str]
    binds: tuple[str, ...] = ("entity",)
    about: tuple[str, ...] = ("entity",)
    count: bool = False
    keep: Callable[[object, Mapping[str, Node], frozenset], bool] | None = None
    contrast: str | None = None
    listing: str | None = None

    def gold(self, bindings: Mapping[str, Node]) -> str:
        """The gold SELECT: the pattern under a VALUES block of the bound terms (COUNT for a counting family)."""
        names = " ".join(f"?{v}" for v in self.binds)
        values = " ".join(bindings[v].n3() for v in self.binds)
        head = "SELECT (COUNT(DISTINCT ?answer) AS ?count)" if self.count else "SELECT DISTINCT ?answer"
        return with_prefixes(f"{head} WHERE {{ VALUES ({names}) {{ ({values}) }} {self.where} }}")

    def candidates_query(self) -> str:
        """The SELECT that lists every binding and its answers (the pattern with nothing bound)."""
        names = " ".join(f"?{v}" for v in self.binds)
        return with_prefixes(f"SELECT DISTINCT {names} ?answer WHERE {{ {self.listing or self.where} }}")


def with_prefixes(query: str) -> str:
    """`query` with the PREFIX declarations of the PREFIXES it uses."""
    used = [p for p in PREFIXES if re.search(rf"(?<![\w-]){p}:", query)]
    return "".join(f"PREFIX {p}: <{PREFIXES[p]}> " for p in used) + query


GROUPS = ("hierarchy", "schema", "annotation", "count", "axiom")  # the order families are listed and picked in
_FAMILIES: dict[str, Family] = {}
FAMILIES = MappingProxyType(_FAMILIES)  # family name -> Family (see `ordered` for the listing order)


def family(name: str, group: str, *, needs: str, where: str, **options):
    """Decorator: register the question function it wraps as family `name` of `group` (options: the other Family
    fields); ValueError when the name is taken or the group unknown."""

    def wrap(ask):
        """Register `ask` and return it unchanged."""
        if name in _FAMILIES or group not in GROUPS:
            raise ValueError(f"task family {name!r} exists already or its group {group!r} is not one of {GROUPS}")
        _FAMILIES[name] = Family(name, group, needs, where, ask, **options)
        return ask

    return wrap


def ordered() -> list[Family]:
    """Every family, by group (in GROUPS order), then in the order its module registers them."""
    return sorted(_FAMILIES.values(), key=lambda f: GROUPS.index(f.group))


def groups() -> dict[str, tuple[str, ...]]:
    """Group name -> the names of its families, in listing order."""
    out: dict[str, tuple[str, ...]] = {}
    for f in ordered():
        out[f.group] = (*out.get(f.group, ()), f.name)
    return out
