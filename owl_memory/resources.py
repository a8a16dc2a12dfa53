"""Files the package ships (the memory ontology, the memory shapes, the JSON schemas, sprint 1, the curricula) and
real ontologies that installed dependencies ship (DC Terms inside owlready2, schema.org inside pySHACL)."""

from __future__ import annotations

import json
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import jsonschema
from rdflib import Graph

from .adapters import rdflib as rdf
from .errors import ConfigError


def shipped(package: str, name: str) -> Path:
    """Path of a shipped file, e.g. shipped("ontology", "owl-memory.ttl")."""
    spec = find_spec(f"owl_memory.{package}")  # installed: a data-only package mapped from the top-level folder
    if spec is None or not spec.submodule_search_locations:  # imported from a source checkout without installing
        return Path(__file__).resolve().parents[1] / _FOLDERS.get(package, package) / name
    return Path(next(iter(spec.submodule_search_locations))) / name


@cache
def schema(name: str) -> dict[str, Any]:
    """A shipped JSON schema (schemas/NAME, installed as owl_memory.schemas)."""
    return json.loads(shipped("schemas", name).read_text(encoding="utf-8"))


@cache
def _validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema(name))


def schema_error(name: str, value: object) -> str | None:
    """The first place `value` breaks the shipped schema `name`, as "WHERE: WHAT" in one line, or None."""
    error = min(_validator(name).iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path], default=None)
    if error is None:
        return None
    where = ".".join(str(p) for p in error.absolute_path) or "(top level)"
    return f"{where}: {error.message[:200]}"


# packages whose top-level folder has another name
_FOLDERS = {"sprint1": "experiments/sprint1", "curricula": "experiments/curricula"}

# name -> (installed package, file inside it): real ontologies a user's machine already has
DEPENDENCY_ONTOLOGIES = {"dcterms": ("owlready2", "ontos/dcterms.owl"), "dc": ("owlready2", "ontos/dc.owl"),
                         "dcmitype": ("owlready2", "ontos/dcmitype.owl"), "schema": ("pyshacl", "assets/schema.ttl")}


def package_file(package: str, name: str) -> Path:
    """Path of file `name` inside the installed package `package`; ConfigError when the package is not installed."""
    spec = find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"package {package!r} is not installed; pip install {package}")
    return Path(next(iter(spec.submodule_search_locations))) / name


def dependency_ontology(name: str) -> Path:
    """Path of a real ontology an installed dependency ships, by its short name (keys of DEPENDENCY_ONTOLOGIES)."""
    return package_file(*DEPENDENCY_ONTOLOGIES[name])


@cache
def memory_ontology() -> Graph:
    """The memory ontology (ontology/owl-memory.ttl) as a Graph; treat it as read-only."""
    return rdf.parse_file(shipped("ontology", "owl-memory.ttl"))


@cache
def memory_shapes() -> Graph:
    """The memory shapes (shapes/owl-memory-shapes.ttl) as a Graph; treat it as read-only."""
    return rdf.parse_file(shipped("shapes", "owl-memory-shapes.ttl"))
