"""A model's Turtle answer as triples: fences stripped, prefixes declared, blank nodes left out."""

from __future__ import annotations

import re

from rdflib import BNode, Graph

from ..construction import nt_line


def parse_turtle(text: str, prefixes: dict) -> Graph | None:
    """A model's Turtle answer (code fences stripped, `prefixes` declared) as a graph; None when it does not parse."""
    head = "".join(f"@prefix {p}: <{ns}> .\n" for p, ns in prefixes.items())
    body = re.sub(r"^```\w*\s*|```\s*$", "", str(text).strip())
    try:
        return Graph().parse(data=head + body, format="turtle")
    except Exception:  # rdflib raises many parser-specific types
        return None


def named_triples(answer: Graph, keep) -> tuple:
    """The triples of `answer` without blank nodes for which `keep(triple)` holds, in N-Triples order."""
    named = (t for t in answer if keep(t) and not any(isinstance(x, BNode) for x in t))
    return tuple(sorted(named, key=nt_line))
