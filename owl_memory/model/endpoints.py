"""SPARQL endpoints as typed values: the limits an agent's endpoint calls run under (`EndpointLimits`), which
endpoints a run may contact (`EndpointGrant`) and what runs learned about one endpoint (`EndpointProfile`, stored as
an om:EndpointProfile memory item)."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, fields, replace
from urllib.parse import urlsplit, urlunsplit

from ..errors import ConfigError
from ..vocab import is_iri
from .handles import sha256
from .items import INVISIBLE

PROFILE_LIST = 12  # entries one profile keeps per list (graphs, features, prefixes, classes, limits, quirks)
PROFILE_RUNS = 50  # runs a profile names as the ones that taught it
PROFILE_IRI = 200  # characters of an IRI a profile keeps (a longer one is not kept at all)
PROFILE_TEXT = 200  # characters of a limit or quirk a profile keeps (the rest is cut)
IRI_LISTS = ("graphs", "features", "result_formats", "prefixes", "classes")  # lists that hold IRIs only
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
DEFAULT_PORTS = {"http": 80, "https": 443}
_MAPPED_TO = re.compile(r"=(?=https?://)", re.IGNORECASE)


def normalize_url(url: str) -> str:
    """An endpoint URL in one form: lower-case scheme and host, explicit port, path ("/" when empty), no fragment;
    ConfigError for anything but http(s) with a host, or a URL carrying user info or a query string."""
    try:
        parts = urlsplit(str(url).strip())
        port = parts.port
    except ValueError as e:
        raise ConfigError(f"endpoint {str(url)[:120]!r} is not a URL ({e}); pass e.g. "
                          "http://127.0.0.1:7878/query") from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        raise ConfigError(f"endpoint {str(url)[:120]!r} must be an http(s) URL with a host, e.g. "
                          "http://127.0.0.1:7878/query")
    if parts.username or parts.password or parts.query:
        raise ConfigError(f"endpoint {str(url)[:120]!r} carries user info or a query string; pass the bare endpoint "
                          "URL")
    host = parts.hostname.lower()
    host = f"[{host}]" if ":" in host else host
    return urlunsplit((scheme, f"{host}:{port or DEFAULT_PORTS[scheme]}", parts.path or "/", "", ""))


def keepable_iri(text: str) -> bool:
    """Whether `text` is one absolute IRI a profile may keep (vocab.is_iri: a scheme, no space, control or
    delimiter character), with no invisible character, at most PROFILE_IRI characters."""
    return len(text) <= PROFILE_IRI and is_iri(text) and not INVISIBLE.search(text)


def plain_text(text: str) -> str:
    """Remote text as a profile keeps it: control and invisible characters dropped, spaces collapsed, clipped."""
    return " ".join(INVISIBLE.sub("", _CONTROL.sub(" ", text)).split())[:PROFILE_TEXT]


def endpoint_key(url: str) -> str:
    """The stable key of an endpoint: 16 hex of sha256 over its normalized URL."""
    return sha256(normalize_url(url))[:16]


@dataclass(frozen=True)
class EndpointLimits:
    """What one run's endpoint calls are held to.

    Args:
        seconds: wall time of one request (connect, wait and read together).
        max_bytes: bytes of one response; a larger one is cut off and refused.
        max_rows: rows of one SELECT kept (more are cut and flagged truncated).
        requests: requests the whole run may send.
    """

    seconds: float = 10.0
    max_bytes: int = 2_000_000
    max_rows: int = 1_000
    requests: int = 40

    def __post_init__(self):
        """Refuse limits that cannot work."""
        if not (self.seconds > 0 and self.max_bytes >= 1024 and self.max_rows >= 1 and self.requests >= 1):
            raise ConfigError("endpoint limits need seconds > 0, max_bytes >= 1024, max_rows >= 1, requests >= 1")


@dataclass(frozen=True)
class EndpointGrant:
    """One endpoint a run may contact: its URL (normalized), the name a corpus gives it (its schema:target, when the
    user mapped one to this URL) and the corpus's example count for it."""

    url: str
    target: str | None = None
    examples: int | None = None

    @classmethod
    def parse(cls, spec: str) -> EndpointGrant:
        """A grant from "URL" or "TARGET=URL" (a corpus target pointed at a mirror or a local copy)."""
        text = str(spec).strip()
        mapped = _MAPPED_TO.search(text)  # the "=" before the URL's scheme: one in a query string is no map entry
        target, sep, url = (text[:mapped.start()], "=", text[mapped.end():]) if mapped else ("", "", text)
        if sep and not target.strip():
            raise ConfigError(f"an endpoint map entry is TARGET=URL, got {text[:120]!r}")
        return cls(normalize_url(url), normalize_url(target) if target.strip() else None)


def parse_grants(specs) -> tuple[EndpointGrant, ...]:
    """Grants from "URL" / "TARGET=URL" strings (or grants), without repeats, in the order given."""
    out: dict[tuple, EndpointGrant] = {}
    for s in (specs,) if isinstance(specs, str | EndpointGrant) else specs or ():
        grant = s if isinstance(s, EndpointGrant) else EndpointGrant.parse(s)
        out.setdefault((grant.url, grant.target), grant)
    return tuple(out.values())


@dataclass(frozen=True)
class EndpointProfile:
    """What runs learned about one SPARQL endpoint; one per endpoint, merged on every run that learned more.

    Args:
        url: the endpoint (normalized).
        graphs, features, result_formats: named graphs, sd:feature and sd:resultFormat values seen.
        prefixes, classes: namespaces and classes used by queries that answered.
        limits: limits observed (a timeout, a response cut at the byte cap, rows cut).
        quirks: errors and what fixed them ("an error ... was fixed by a query using GRAPH").
        runs: ids of the runs that taught it (PROV: each version was generated by one of them).
    """

    url: str
    graphs: tuple[str, ...] = ()
    features: tuple[str, ...] = ()
    result_formats: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()
    classes: tuple[str, ...] = ()
    limits: tuple[str, ...] = ()
    quirks: tuple[str, ...] = ()
    runs: tuple[str, ...] = ()

    def __post_init__(self):
        """Normalize the URL; keep only IRIs in the IRI lists and plain text in the others; every list unique, in
        first-seen order and bounded."""
        object.__setattr__(self, "url", normalize_url(self.url))
        for f in fields(self)[1:]:
            cap = PROFILE_RUNS if f.name == "runs" else PROFILE_LIST
            values = [str(v) for v in getattr(self, f.name)]
            kept = [v for v in values if keepable_iri(v)] if f.name in IRI_LISTS else [plain_text(v) for v in values]
            object.__setattr__(self, f.name, tuple(dict.fromkeys(v for v in kept if v))[:cap])

    @property
    def key(self) -> str:
        """The endpoint's stable key (endpoint_key of its URL)."""
        return endpoint_key(self.url)

    def merged(self, other: EndpointProfile) -> EndpointProfile:
        """This profile with what `other` (the same endpoint) adds to each list."""
        return replace(self, **{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)[1:]})

    def learned(self) -> bool:
        """Whether it holds anything beyond the runs' ids."""
        return any(getattr(self, f.name) for f in fields(self)[1:-1])

    def brief(self) -> dict:
        """The profile as a tool shows it: every list but the runs, and how many runs taught it."""
        return {**{f.name: list(getattr(self, f.name)) for f in fields(self)[1:-1]}, "runs": len(self.runs)}

    def to_json(self) -> str:
        """JSON text on one line; from_json(to_json()) == self."""
        return json.dumps(asdict(self), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> EndpointProfile:
        """Inverse of to_json; ConfigError when the text is not a profile."""
        try:
            data = json.loads(text)
            return cls(data["url"], **{f.name: tuple(data.get(f.name) or ()) for f in fields(cls)[1:]})
        except (ValueError, KeyError, TypeError) as e:
            raise ConfigError(f"not an endpoint profile ({type(e).__name__}: {str(e)[:80]})") from e
