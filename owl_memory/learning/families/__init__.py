"""Task families for curricula generated from ontologies, one module per kind of procedure (importing this package
registers them all): hierarchy, schema, annotations, counts, axioms."""

from . import annotations, axioms, counts, hierarchy, schema
from .registry import FAMILIES, GROUPS, Family, family, groups, ordered
from .view import OntologyView, is_builtin, parse, view_of

__all__ = ["FAMILIES", "GROUPS", "Family", "OntologyView", "annotations", "axioms", "counts", "family", "groups",
           "hierarchy", "is_builtin", "ordered", "parse", "schema", "view_of"]
