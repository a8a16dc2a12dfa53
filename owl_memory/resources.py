"""Files the package ships: the memory ontology, the memory shapes, the JSON schemas and sprint 1."""

from __future__ import annotations

from functools import cache
from importlib.util import find_spec
from pathlib import Path

from rdflib import Graph


def shipped(package: str, name: str) -> Path:
    """Path of a shipped file, e.g. shipped("ontology", "owl-memory.ttl")."""
    spec = find_spec(f"owl_memory.{package}")  # installed: a data-only package mapped from the top-level folder
    if spec is None:  # imported from a source checkout without installing
        return Path(__file__).resolve().parents[1] / _FOLDERS.get(package, package) / name
    return Path(next(iter(spec.submodule_search_locations))) / name


# packages whose top-level folder has another name
_FOLDERS = {"sprint1": "experiments/sprint1", "curricula": "experiments/curricula"}


@cache
def memory_ontology() -> Graph:
    """The memory ontology (ontology/owl-memory.ttl) as a Graph; treat it as read-only."""
    return Graph().parse(shipped("ontology", "owl-memory.ttl"), format="turtle")


@cache
def memory_shapes() -> Graph:
    """The memory shapes (shapes/owl-memory-shapes.ttl) as a Graph; treat it as read-only."""
    return Graph().parse(shipped("shapes", "owl-memory-shapes.ttl"), format="turtle")
