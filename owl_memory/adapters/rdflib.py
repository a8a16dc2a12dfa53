"""rdflib's parsers and serializers behind one door: every parse of RDF in owl-memory goes through `parse_text` or
`parse_file` (and an N3 term through `term`), and every way rdflib's parsers and the libraries under them (xml.sax,
json / orjson) fail on bad input becomes one LoadError naming the source, the line when the parser gives it, and the
parser's reason, cut before any excerpt of the text it quotes (a Turtle reason never carries the text).

Formats are whatever rdflib parses: turtle, nt, n3, xml (RDF/XML), json-ld, trig, nquads, trix, hext. Which
exceptions they raise was read off rdflib 7.6 by mutating real files of each format: besides its own BadSyntax
(Turtle, TriG, N3) and ParserError (N-Triples, N-Quads, RDF/XML, TriX), xml.sax's SAXParseException, JSONDecodeError,
UnicodeDecodeError, and built-in errors its Turtle and JSON-LD code lets through (PARSE_ERRORS lists them).

rdflib's JSON-LD parser fetches every context a document names (an @context or @import that is a URL or a file
path), with no timeout and past any allow-list; `parse_text(..., fetch=False)` refuses such text before parsing. XML
(RDF/XML, TriX) with a DOCTYPE or an entity declaration is refused the same way, by expat handlers that stop at the
declaration, before any entity is expanded. `parse_contained` is the door for a body another party wrote (an
endpoint's answer): those refusals, then the parse in a child process (`python -m owl_memory.adapters.rdflib`) under
a wall-time and CPU limit, killed on overrun, that hands back N-Triples. No parser here follows owl:imports.

An ill-typed literal ("2021-13-45"^^xsd:date) is data, not an error: it stays a literal with its lexical form (SHACL's
sh:datatype reports it), and rdflib's logged warning with a traceback for it is dropped (`_IllTypedLiterals`).
"""

from __future__ import annotations

import json
import logging
import re
import resource
import subprocess
import sys
from json import JSONDecodeError
from pathlib import Path
from typing import Any
from xml.parsers import expat
from xml.sax import SAXException, SAXParseException

from rdflib import Graph
from rdflib.exceptions import Error as RdflibError, ParserError
from rdflib.plugin import PluginException, get
from rdflib.plugins.parsers.notation3 import BadSyntax
from rdflib.serializer import Serializer
from rdflib.util import from_n3

from ..errors import LoadError, OutputError

PARSE_ERRORS = (
    SyntaxError,  # Turtle, TriG, N3: BadSyntax
    RdflibError,  # N-Triples, N-Quads, RDF/XML, TriX: ParserError; an unknown format: PluginException
    SAXException,  # RDF/XML, TriX: XML that is not well-formed
    ValueError,  # JSON-LD, HexTuples: JSONDecodeError; text that is not UTF-8; a bad language tag
    LookupError,  # Turtle cut off inside a statement: IndexError; JSON-LD, HexTuples, an N3 term: KeyError
    TypeError, AttributeError,  # JSON-LD, HexTuples: a value of the wrong JSON type where a node or string belongs
    AssertionError,  # Turtle, TriG, N3: a string without its closing quote
    RecursionError,  # Turtle, N3: nesting ([ ... ] or ( ... )) deeper than Python's stack
    OSError,  # a file, or a JSON-LD context it names, that cannot be read
)
_LOCATED = re.compile(r"^[^\n]*?:(\d+):\d+: (.+)", re.S)  # rdflib's RDF/XML and TriX errors: "<id>:<line>:<col>: why"


class _IllTypedLiterals(logging.Filter):
    """Drops rdflib's warning (and traceback) for a literal whose lexical form is not of its datatype."""

    def filter(self, record: logging.LogRecord) -> bool:
        """False for that warning, True for any other record."""
        return not str(record.msg).startswith("Failed to convert Literal lexical form to value")


logging.getLogger("rdflib.term").addFilter(_IllTypedLiterals())


class _SameLabels(dict):
    """A bnode context for the N-Triples parser that keeps every blank node label as written."""

    def get(self, key, default=None):
        """The label itself, so `_:b1` parses back to BNode('b1')."""
        return key


def parse_text(text: str | bytes, format: str = "turtle", *, graph: Graph | None = None, base: str | None = None,
               source: str = "<text>", same_labels: bool = False, fetch: bool = True) -> Graph:
    """RDF `text` in `format` parsed into `graph` (a new Graph by default), relative IRIs resolved against `base`
    (rdflib's default is the working directory); `same_labels` keeps N-Triples blank node labels as written; with
    `fetch=False`, JSON-LD that names a context to fetch and XML with a DTD or entities are refused. LoadError
    naming `source`, the line and the parser's reason when it does not parse."""
    if not fetch:
        _refuse_fetching(text, format, source)
    graph = Graph() if graph is None else graph
    extra: dict[str, Any] = {"bnode_context": _SameLabels()} if same_labels else {}  # an N-Triples parser option
    try:
        return graph.parse(data=text, format=format, publicID=base, **extra)
    except PARSE_ERRORS as e:
        raise _load_error(e, format, source) from e


def parse_contained(text: str | bytes, format: str, *, base: str | None = None, source: str = "<text>",
                    seconds: float = 10.0) -> Graph:
    """A body another party wrote parsed without fetching anything (parse_text's fetch=False) in a child process
    under `seconds` of wall time and CPU; LoadError when it does not parse, names something to fetch or overruns."""
    _refuse_fetching(text, format, source)
    data = text.encode("utf-8", "replace") if isinstance(text, str) else text
    cmd = [sys.executable, "-m", "owl_memory.adapters.rdflib", format, base or "", str(seconds)]
    try:
        done = subprocess.run(cmd, input=data, capture_output=True, timeout=seconds)
        reply = json.loads(done.stdout or b"{}")
    except subprocess.TimeoutExpired:
        raise LoadError(f"parsing took more than {seconds:g} s and was stopped; ask for less", source=source,
                        reason="parse time limit") from None
    except ValueError:  # the child died (its CPU or memory limit) before it answered
        reply = {}
    if "nt" not in reply:
        why = str(reply.get("error") or f"the parser stopped (exit {done.returncode}) before it finished")
        raise LoadError(why, source=source, line=reply.get("line"), reason=str(reply.get("reason") or why))
    return parse_text(reply["nt"], "nt")


def _cap(seconds: float) -> None:
    """In the parsing child: at most `seconds` of CPU (plus slack) and 1 GB of address space."""
    for limit, soft in ((resource.RLIMIT_CPU, int(seconds) + 1), (resource.RLIMIT_AS, 1 << 30)):
        hard = resource.getrlimit(limit)[1]
        resource.setrlimit(limit, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))


def _refuse_fetching(text: str | bytes, format: str, source: str) -> None:
    """LoadError when parsing `text` would fetch a document (a JSON-LD context) or read a DTD or entities (XML)."""
    named = _named_context(text) if format == "json-ld" else None
    if named is not None:
        raise LoadError(f"the JSON-LD names a context to fetch ({named[:120]}); nothing is fetched for it here: "
                        "inline the context", source=source, reason="names a JSON-LD context to fetch")
    declared = _xml_declaration(text) if format in ("xml", "trix") else None
    if declared is not None:
        raise LoadError(f"the XML carries {declared}; DTDs and entities are refused here: send plain RDF/XML",
                        source=source, reason="XML with a DTD or entities")


class _Declared(Exception):
    """Raised by an expat handler at the first DOCTYPE or entity declaration."""


def _xml_declaration(text: str | bytes) -> str | None:
    """What XML `text` declares that a parser would read or expand (a DOCTYPE, an entity), or None; expat stops at
    the declaration, before any expansion. Malformed XML is left to the parser to describe."""
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    found = {"StartDoctypeDeclHandler": "a DOCTYPE", "EntityDeclHandler": "an entity declaration",
             "ExternalEntityRefHandler": "an external entity"}
    for handler, what in found.items():
        def stop(*_, what=what):
            raise _Declared(what)
        setattr(parser, handler, stop)
    try:
        parser.Parse(text, True)
    except _Declared as e:
        return str(e)
    except expat.ExpatError:
        return None
    return None


def _named_context(text: str | bytes) -> str | None:
    """The first document a JSON-LD text would make the parser fetch (an @context or @import naming one), or None
    (also when it is not JSON: the parser says what is wrong with it)."""
    try:
        todo = [json.loads(text)]
    except (ValueError, RecursionError):
        return None
    while todo:
        value = todo.pop()
        if isinstance(value, list):
            todo += value
        elif isinstance(value, dict):
            for key, v in value.items():
                named = [c for c in (v if isinstance(v, list) else [v]) if isinstance(c, str)]
                if key in ("@context", "@import") and named:
                    return named[0]
                todo.append(v)
    return None


def parse_file(path: str | Path, format: str = "turtle", *, graph: Graph | None = None) -> Graph:
    """The RDF file at `path` in `format` parsed into `graph` (a new Graph by default); LoadError naming the file,
    the line and the parser's reason when it is missing, unreadable or does not parse."""
    graph = Graph() if graph is None else graph
    try:
        return graph.parse(str(path), format=format)
    except PARSE_ERRORS as e:
        raise _load_error(e, format, str(path)) from e


def term(text: str):
    """The RDF term an N3 string spells (an IRI in <...>, a literal, a blank node; None for ""); LoadError when it
    spells none."""
    try:
        return from_n3(text)
    except PARSE_ERRORS as e:
        raise _load_error(e, "an N3 term", "<term>") from e


def _load_error(error: BaseException, format: str, source: str) -> LoadError:
    """The LoadError for a parser's exception: its reason and line."""
    reason, line = _described(error)
    if isinstance(error, OSError):
        return LoadError(f"{reason}; check the path", source=source, reason=reason)
    fix = "convert it to UTF-8 (e.g. iconv -t utf-8)" if isinstance(error, UnicodeDecodeError) else "fix the RDF"
    return LoadError(f"cannot parse as {format}: {reason}; {fix} and retry", source=source, line=line, reason=reason)


def _described(error: BaseException) -> tuple[str, int | None]:
    """(the parser's reason in one line of at most 200 characters, the 1-based line it names or None)."""
    if isinstance(error, BadSyntax):
        return error._why[:200], error.lines + 1
    if isinstance(error, SAXParseException):
        return error.getMessage()[:200], error.getLineNumber()
    if isinstance(error, JSONDecodeError):
        return f"not JSON: {error.msg}"[:200], error.lineno
    if isinstance(error, UnicodeDecodeError):
        return f"not UTF-8 text (byte {error.start})", None
    if isinstance(error, RecursionError):
        return "nested too deeply to parse ([ ... ] or ( ... ) inside one another)", None
    if isinstance(error, IndexError):
        return "the text ends inside a statement", None
    if isinstance(error, FileNotFoundError):
        return f"no such file ({error.filename})"[:200], None
    if isinstance(error, OSError):  # the file, or a JSON-LD context it names
        return f"cannot read {error.filename or 'a document it names'} ({error.strerror or error})"[:200], None
    located = _LOCATED.match(str(error)) if isinstance(error, ParserError) else None
    if located:
        return _first_line(located.group(2)), int(located.group(1))
    return _first_line(str(error)) or type(error).__name__, None


def _first_line(message: str) -> str:
    """The first line of a parser message, cut before any text it quotes (" at ^ in: ..."), at most 200 chars."""
    line = next((ln.strip() for ln in message.splitlines() if ln.strip()), "")
    return line.split(" at ^", 1)[0].removesuffix(":")[:200]


def check_format(format: str) -> None:
    """OutputError unless rdflib has a serializer named `format`."""
    try:
        get(format, Serializer)
    except PluginException as e:
        raise OutputError(f"unknown RDF format {format[:40]!r}; use turtle, xml, nt, json-ld, n3 or trig") from e


def serialize_to(graph: Graph, file, format: str) -> None:
    """Write `graph` to a binary file object as UTF-8 `format` (checked with check_format first)."""
    graph.serialize(destination=file, format=format, encoding="utf-8")


def main(argv: list[str]) -> int:
    """The parsing child of parse_contained: capped (`_cap`, argv[2] seconds) before it reads anything, the body on
    stdin in format argv[0] (base argv[1]) as one JSON line on stdout, {"nt": N-Triples} or {"error", "reason",
    "line"}."""
    _cap(float(argv[2]))
    try:
        g = parse_text(sys.stdin.buffer.read(), argv[0], base=argv[1] or None, source="", fetch=False)
        reply: dict[str, Any] = {"nt": g.serialize(format="nt")}
    except LoadError as e:
        reply = {"error": str(e), "reason": e.reason, "line": e.line}
    sys.stdout.write(json.dumps(reply))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
