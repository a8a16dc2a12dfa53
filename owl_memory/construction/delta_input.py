"""Turtle a construction agent writes, read into triples: size-capped before parsing, the workspace's prefixes
declared, parse errors as one-line fix-it messages (line and reason, never the text back), blank nodes refused."""

from __future__ import annotations

import re

from rdflib import BNode, Graph

from ..adapters import rdflib as rdf
from ..errors import LoadError, ToolError
from .workspace import nt_line

MAX_TURTLE = 20_000  # characters of one Turtle argument, checked before anything parses it
MAX_TRIPLES = 1_000  # triples one delta may add or remove
_FENCE = re.compile(r"^```\w*\s*|```\s*$")


def parse_delta(text, prefixes: dict, what: str, base: str) -> list:
    """The triples of one Turtle argument (`what` names it in messages; relative IRIs resolve against `base`, never
    the working directory), sorted; ToolError when it is not a string, too long, not Turtle, holds blank nodes or too
    many triples. Empty text gives []."""
    if text is None:
        return []
    if not isinstance(text, str):
        raise ToolError(f"{what} must be a string of Turtle, e.g. 'ex:a a ex:Thing .'")
    if len(text) > MAX_TURTLE:
        raise ToolError(f"{what} is {len(text)} characters; one delta takes at most {MAX_TURTLE}: split it into "
                        "several workspace_apply calls")
    body = _FENCE.sub("", text.strip())
    if not body.strip():
        return []
    head = "".join(f"@prefix {p}: <{ns}> .\n" for p, ns in prefixes.items())
    graph = _parsed(head + body, head.count("\n"), prefixes, what, base)
    if any(isinstance(x, BNode) for t in graph for x in t):
        raise ToolError(f"{what} has blank nodes ([ ... ], _:x or a list); they match nothing already in the graph "
                        "and cannot be undone by name: mint an IRI for each node")
    if len(graph) > MAX_TRIPLES:
        raise ToolError(f"{what} holds {len(graph)} triples; one delta takes at most {MAX_TRIPLES}: split it")
    return sorted(graph, key=nt_line)


def _parsed(text: str, header_lines: int, prefixes: dict, what: str, base: str) -> Graph:
    """The parsed graph; ToolError with the line (counted in the agent's own text) and the parser's reason."""
    try:
        return rdf.parse_text(text, "turtle", base=base)
    except LoadError as e:  # its reason never quotes the text
        where = f" at line {max(1, e.line - header_lines)}" if e.line else ""
        hint = f"; declared for you: {', '.join(sorted(prefixes))}" if "not bound" in e.reason else ""
        raise ToolError(f"{what} is not valid Turtle{where} ({e.reason}){hint}; fix it and retry, nothing was "
                        "changed") from None
