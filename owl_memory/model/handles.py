"""Handles on payloads: `Ref` (what a payload is, never its text) and `Window` (one capped read of it)."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass


def sha256(text: str) -> str:
    """Hex sha256 of a text's UTF-8 bytes (lone surrogates encoded as themselves, so every str has one)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Ref:
    """A handle on a payload: key, kind, size in characters and sha; its repr never shows the payload.

    Args:
        key: "sha256:<hex>", the blob store key.
        kind: what the payload is (prompt, ontology, trace, window, report, delta, results, content).
        size: payload length in characters.
        sha: hex sha256 of the payload.
    """

    key: str
    kind: str
    size: int
    sha: str

    def __repr__(self):
        return f"Ref(kind={self.kind!r}, size={self.size}, key={self.key[:19]}…)"

    __str__ = __repr__

    def to_dict(self) -> dict:
        """JSON-compatible form: the handle's metadata, no payload."""
        return {"ref": self.key, "kind": self.kind, "size": self.size, "sha": self.sha}

    @classmethod
    def from_dict(cls, d: dict) -> Ref:
        """The handle of its JSON form; from_dict(to_dict()) == self."""
        return cls(d["ref"], d["kind"], int(d["size"]), d["sha"])


@dataclass(frozen=True)
class Window:
    """At most one read's worth of a payload: its text, where it starts and ends, and the payload's whole size."""

    text: str
    start: int
    end: int
    size: int

    def to_dict(self) -> dict:
        """JSON-compatible form: {text, start, end, size}."""
        return asdict(self)
