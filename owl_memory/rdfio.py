"""Files at the edge: graphs and text in (typed load errors), graphs out (checked first, written atomically)."""

from __future__ import annotations

import os
import re
import secrets
import stat
from pathlib import Path

from rdflib import Graph

from .adapters import rdflib as rdf
from .errors import LoadError, OutputError

_FORMATS = {".ttl": "turtle", ".nt": "nt", ".n3": "n3", ".owl": "xml", ".rdf": "xml", ".xml": "xml",
            ".jsonld": "json-ld", ".trig": "trig", ".nq": "nquads"}


def guess_format(path: str | Path) -> str:
    """The rdflib parser name for a file, by its suffix (Turtle when unknown)."""
    return _FORMATS.get(Path(path).suffix.lower(), "turtle")


def load_graph(source: str | Path | Graph, format: str | None = None) -> Graph:
    """Normalize a path, RDF text or Graph into a Graph (parsed by adapters.rdflib); LoadError names the file and
    line on bad input."""
    if isinstance(source, Graph):
        return source
    is_path = _names_a_file(str(source)) or isinstance(source, Path)
    if is_path and not os.path.exists(source):  # rdflib would resolve a relative path against the wrong folder
        raise LoadError("no such file; check the path", source=str(source))
    own = Graph(bind_namespaces="none")  # the file's prefixes first: among rdflib's defaults its dc: became dc1:
    if is_path:
        g = rdf.parse_file(source, format or guess_format(source), graph=own)
    else:
        g = rdf.parse_text(str(source), format or "turtle", graph=own)
    _bind_defaults(g)
    g.base = declared_base(_head(source) if is_path else str(source)[:_HEAD])
    return g


def _bind_defaults(g: Graph) -> None:
    """Give `g` rdflib's default prefixes (prof:, schema: ...: shapes' SPARQL may use them undeclared) where neither
    the prefix nor its namespace is one of the file's own, so no prefix of the file is renamed."""
    prefixes, spaces = {p for p, _ in g.namespaces()}, {str(ns) for _, ns in g.namespaces()}
    for prefix, ns in Graph().namespaces():
        if prefix not in prefixes and str(ns) not in spaces:
            g.bind(prefix, ns)


def _names_a_file(text: str) -> bool:
    """Whether a string given as a source is a file path rather than RDF text: an existing file, or one line ending
    in an RDF file suffix (missing.ttl) with none of the brackets and quotes RDF text has (then "no such file")."""
    if len(text) >= 4096 or "\n" in text:
        return False
    return os.path.exists(text) or (Path(text).suffix.lower() in _FORMATS and not any(c in text for c in '<>"{}'))


_HEAD = 65536  # characters a base declaration is looked for in (formats declare it at the top)
_BASES = (re.compile(r"^\s*(?:@base|BASE)\s*<([^>]*)>", re.M | re.I), re.compile(r"xml:base\s*=\s*[\"']([^\"']+)"),
          re.compile(r"\"@base\"\s*:\s*\"([^\"]+)\""))


def declared_base(text: str) -> str | None:
    """The base IRI a Turtle / TriG / N3 (@base, BASE), RDF/XML (xml:base) or JSON-LD (@base) text declares first,
    or None: rdflib resolves it while parsing and forgets it, so a graph written back would lose it."""
    found = [(m.start(), m.group(1)) for r in _BASES for m in [r.search(text)] if m is not None]
    return min(found)[1] if found else None


def _head(path) -> str:
    """The first characters of a text file (empty when it cannot be read as text)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(_HEAD)
    except OSError:
        return ""


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


_PSEUDO = ("/proc", "/sys", "/dev")  # kernel file systems: their files are not data files, even "regular" ones


def check_output(path: str | Path, format: str | None = None) -> Path:
    """The regular file `path` stands for (a symlink's target), if a file (of RDF `format`, when given) can be written
    there; OutputError, before any work is done, when not: an existing target that is not a regular file (a folder,
    FIFO, device or socket), anything under /proc, /sys or /dev, a missing or read-only folder, an unknown format."""
    if format is not None:
        rdf.check_format(format)
    try:
        target = Path(os.path.realpath(path))  # a symlink is written through: its target is what changes
        kind = _kind(target)
    except (OSError, ValueError) as e:  # a NUL in the name, a name too long, a loop of links
        raise OutputError(f"cannot write to {str(path)[:200]!r} ({_why(e)}); give another file path") from None
    places = (os.path.abspath(path), str(target))  # as given (/dev/stdout is a link into /proc) and as resolved
    pseudo = next((r for r in _PSEUDO for p in places if p == r or p.startswith(r + "/")), None)
    if pseudo is not None:
        raise OutputError(f"{path} is under {pseudo}, a kernel file system, not a place for data; give a file path in "
                          "a folder of yours")
    if kind == "folder":
        raise OutputError(f"{path} is a folder; give a file path to write")
    if kind not in ("missing", "file"):
        raise OutputError(f"{path} is a {kind}, not a regular file; owl-memory replaces files atomically and would "
                          "remove it: give a regular file path")
    folder = target.parent
    if not folder.is_dir():
        raise OutputError(f"folder {folder} does not exist; create it first (mkdir -p {folder})")
    if not os.access(folder, os.W_OK) or (kind == "file" and not os.access(target, os.W_OK)):
        raise OutputError(f"{path} is not writable; pick another path or fix its permissions")
    return target


def output_folder(path: str | Path) -> Path:
    """The folder `path`, created when missing; OutputError when something else is there or it cannot be made."""
    path = Path(path)
    try:
        kind = _kind(Path(os.path.realpath(path)))
        if kind not in ("missing", "folder"):
            raise OutputError(f"{path} is a {kind}, not a folder; give a folder path for the output")
        path.mkdir(parents=True, exist_ok=True)
    except (OSError, ValueError) as e:
        raise OutputError(f"cannot make the output folder {str(path)[:200]!r} ({_why(e)}); give another") from None
    return path


def named_inside(folder: str | Path, name: str) -> Path:
    """`folder / name` for a name that comes from a file or a user (a sprint's name, a task id): every character
    outside letters, digits, `.`, `_` and `-` (and every run of dots) becomes one `-`, leading and trailing dots and
    dashes go, at most 120 characters, and the path is checked to stay inside `folder` once resolved (OutputError if
    not: a link inside the folder pointing out)."""
    safe = re.sub(r"-+", "-", re.sub(r"[^A-Za-z0-9._-]+|\.{2,}", "-", name)).strip(".-")[:120] or "unnamed"
    path = Path(folder) / safe
    if not Path(os.path.realpath(path)).is_relative_to(os.path.realpath(folder)):
        raise OutputError(f"{str(path)[:200]!r} resolves outside {str(folder)[:200]!r}; remove the link or pick "
                          f"another folder")
    return path


def _kind(path: Path) -> str:
    """What is at `path`: missing, file, folder, FIFO, device, socket or special file."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "missing"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "folder"
    return "FIFO" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode) else \
        "device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "special file"


def _why(error: Exception) -> str:
    """An OS error in words, without a traceback."""
    return error.strerror if isinstance(error, OSError) and error.strerror else str(error)[:120]


def write_graph(graph: Graph, path: str | Path, format: str) -> Path:
    """Serialize `graph` to `path` atomically (see write_atomic); returns the file written."""
    return write_atomic(check_output(path, format), lambda f: rdf.serialize_to(graph, f, format))


def write_text(text: str, path: str | Path) -> Path:
    """Write UTF-8 `text` to `path` atomically (see write_atomic); returns the file written."""
    return write_atomic(check_output(path), lambda f: f.write(text.encode("utf-8")))


def write_atomic(path: str | Path, write) -> Path:
    """Call `write(binary file)` on a temp file beside the target, then rename it over the target: a reader sees
    the old file or the new one, never a part. A symlink is written through (its target is replaced, the link kept).
    OutputError, with nothing left behind, when the disk refuses."""
    target = check_output(path)
    tmp = target.parent / f".{target.name}.{secrets.token_hex(6)}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as for a plain open
    except OSError as e:
        raise OutputError(f"cannot write beside {target} ({_why(e)}); pick another path") from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, target)
    except OSError as e:
        os.unlink(tmp)
        raise OutputError(f"writing {target} failed ({_why(e)}); nothing was changed") from None
    except BaseException:
        os.unlink(tmp)
        raise
    return target
