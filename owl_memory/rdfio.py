"""Graph input at the edge: a path, Turtle text or rdflib Graph in, one rdflib Graph out, typed load errors."""

from __future__ import annotations

import os
import re
from pathlib import Path

from rdflib import Graph

from .errors import LoadError

_FORMATS = {".ttl": "turtle", ".nt": "nt", ".n3": "n3", ".owl": "xml", ".rdf": "xml", ".xml": "xml",
            ".jsonld": "json-ld", ".trig": "trig", ".nq": "nquads"}
_LINE = re.compile(r"line (\d+)", re.I)


def guess_format(path: str | Path) -> str:
    """The rdflib parser name for a file, by its suffix (Turtle when unknown)."""
    return _FORMATS.get(Path(path).suffix.lower(), "turtle")


def load_graph(source: str | Path | Graph, format: str | None = None) -> Graph:
    """Normalize a path, RDF text or Graph into a Graph; LoadError names the file and line on bad input."""
    if isinstance(source, Graph):
        return source
    is_path = isinstance(source, Path) or (len(str(source)) < 4096 and "\n" not in str(source)
                                           and os.path.exists(str(source)))
    g, label = Graph(), str(source) if is_path else "<text>"
    try:
        if is_path:
            g.parse(str(source), format=format or guess_format(source))
        else:
            g.parse(data=str(source), format=format or "turtle")
    except FileNotFoundError as e:
        raise LoadError(f"no such file; check the path ({e.filename})", source=label) from e
    except Exception as e:  # rdflib raises many parser-specific types
        m = _LINE.search(str(e))
        raise LoadError(f"cannot parse as {format or guess_format(label)}: {_reason(e)}; fix the RDF and retry",
                        source=label, line=int(m.group(1)) if m else None) from e
    return g


def _reason(e: Exception) -> str:
    """The informative part of a parser message, one line, at most 200 characters."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip() and not ln.startswith("at line")]
    reason = lines[0] if lines else type(e).__name__
    return reason.removesuffix(" at ^ in:").removesuffix(":")[:200]
