"""Files at the edge: graphs and text in (typed load errors), graphs out (checked first, written atomically)."""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path

from rdflib import Graph
from rdflib.plugin import PluginException, get
from rdflib.serializer import Serializer

from .errors import LoadError, OutputError

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


def read_text(path: str | Path, what: str = "file") -> str:
    """A UTF-8 text file's content; LoadError when it is missing, unreadable or not UTF-8 (`what` names it)."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError as e:
        raise LoadError(f"no such {what}; check the path", source=str(path)) from e
    except UnicodeDecodeError as e:
        raise LoadError(f"not UTF-8 text (byte {e.start}); convert it, e.g. iconv -t utf-8", source=str(path)) from e
    except OSError as e:
        raise LoadError(f"cannot read: {e.strerror or e}; check the path", source=str(path)) from e


def check_output(path: str | Path, format: str) -> Path:
    """`path` if a `format` graph can be written there; OutputError (before any work is done) when not."""
    path = Path(path)
    try:
        get(format, Serializer)
    except PluginException as e:
        raise OutputError(f"unknown RDF format {format[:40]!r}; use turtle, xml, nt, json-ld, n3 or trig") from e
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise OutputError(f"{path} is a folder; give a file path to write")
    if not folder.is_dir():
        raise OutputError(f"folder {folder} does not exist; create it first (mkdir -p {folder})")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise OutputError(f"{path} is not writable; pick another path or fix its permissions")
    return path


def write_graph(graph: Graph, path: str | Path, format: str) -> Path:
    """Serialize `graph` to `path` atomically (a temp file in the same folder, then renamed over the target)."""
    path = check_output(path, format)
    tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as for a plain open
    try:
        with os.fdopen(fd, "wb") as f:
            graph.serialize(destination=f, format=format, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return path
