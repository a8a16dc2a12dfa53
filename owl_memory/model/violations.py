"""SHACL violations as every package reads them: one validation result, reduced to what repair needs, and its
signature (the key compiled repair operators are stored under)."""

from __future__ import annotations

from dataclasses import dataclass, fields

from rdflib import BNode, Literal, URIRef
from rdflib.term import Node
from rdflib.util import from_n3

from ..vocab import SH


@dataclass(frozen=True)
class Violation:
    """One SHACL validation result, reduced to what repair needs.

    Args:
        focus: the focus node.
        component: the source constraint component IRI.
        shape: the source shape (IRI or blank node of the shapes graph).
        path: the result path node (None for node-level results).
        value: the value node (None when the result names none).
        message: the result message.
        severity: the severity IRI.
        path_text: the path as SPARQL-like text ("-" when there is none).
        signature: component | shape IRI | path text | value kind (see `violation_signature`).
        detail_of: for a result pySHACL gives as a sh:detail of another (a member of a sh:node value, say), that
            result's key joined by " | " ("" for a top-level result).
    """

    focus: Node
    component: Node | None
    shape: Node | None
    path: Node | None = None
    value: Node | None = None
    message: str = ""
    severity: Node | None = None
    path_text: str = "-"
    signature: str = ""
    detail_of: str = ""

    @property
    def key(self) -> tuple:
        """Identity across verifications: focus, signature, value."""
        return (self.focus.n3(), self.signature, self.value.n3() if self.value is not None else "")

    def to_dict(self) -> dict:
        """JSON-compatible form: every term as N3 (None stays None)."""
        return {f.name: _n3(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_dict(cls, d: dict) -> Violation:
        """The Violation `to_dict` produced (terms parsed back from N3)."""
        text = {"message", "path_text", "signature", "detail_of"}
        return cls(**{k: (d.get(k, "") if k in text else _term(d.get(k))) for k in (f.name for f in fields(cls))})


def violation_signature(component, shape, path: str, value) -> str:
    """Stable violation signature: component local name | shape IRI ("_" when blank) | path | value kind."""
    comp = str(component).removeprefix(str(SH)) if component is not None else "?"
    shape_id = str(shape) if isinstance(shape, URIRef) else "_"
    return f"{comp}|{shape_id}|{path}|{value_kind(value)}"


def value_kind(value) -> str:
    """IRI, BlankNode, Literal:<datatype>, Literal@lang or none: the kind of a result's value."""
    if value is None:
        return "none"
    if isinstance(value, Literal):
        return f"Literal@{value.language}" if value.language else f"Literal:{value.datatype or 'plain'}"
    return "BlankNode" if isinstance(value, BNode) else "IRI"


def _n3(x):
    """A term as N3, a string unchanged, None as None."""
    return x if x is None or isinstance(x, str) and not isinstance(x, Node) else x.n3()


def _term(text):
    """An RDF term from N3 (None stays None)."""
    return None if text is None else from_n3(text)
