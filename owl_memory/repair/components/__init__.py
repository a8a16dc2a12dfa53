"""Repair strategies, one module per section of SHACL's core constraint components (importing registers them)."""

from . import (
    cardinality,
    logical,
    other,
    property_pair,
    shape_based,
    shared,
    sparql,
    string_based,
    value_range,
    value_type,
)

__all__ = ["cardinality", "logical", "other", "property_pair", "shape_based", "shared", "sparql", "string_based",
           "value_range", "value_type"]
