"""The memory ontology loads everywhere it must and HermiT finds it consistent."""

import io
import shutil

import owlready2
import pytest
from rdflib import Graph
from rdflib.namespace import OWL, RDF, RDFS

from owl_memory.resources import memory_ontology, shipped
from owl_memory.vocab import KINDS, OM, PROV


def test_loads_in_rdflib_with_every_kind_under_memory_item():
    g = Graph().parse(shipped("ontology", "owl-memory.ttl"))
    assert (OM.MemoryItem, RDFS.subClassOf, PROV.Entity) in g
    for kind in KINDS:
        assert (OM[kind], RDFS.subClassOf, OM.MemoryItem) in g


def test_declares_every_property_of_the_design():
    g = memory_ontology()
    data = ["title", "summary", "scope", "confidence", "priority", "createdAt", "useCount", "successCount",
            "failureCount", "contentRef", "contentHash", "tag", "violationSignature", "actionSchema",
            "verificationHook"]
    links = ["appliesToOntology", "appliesToTaskType", "preventsFailureMode", "refines", "hasException",
             "supersedes", "conflictsWith", "groundedByEpisode", "derivedFromTrace"]
    assert all((OM[p], RDF.type, OWL.DatatypeProperty) in g for p in data)
    assert all((OM[p], RDF.type, OWL.ObjectProperty) in g for p in links)


def _world_with_ontology():
    """A fresh owlready2 World holding the memory ontology."""
    world = owlready2.World()
    nt = memory_ontology().serialize(format="nt", encoding="utf-8")
    onto = world.get_ontology("http://w3id.org/owl-memory").load(fileobj=io.BytesIO(nt), format="ntriples")
    return world, onto


def test_loads_in_owlready2():
    world, onto = _world_with_ontology()
    assert world["http://w3id.org/owl-memory#RepairOperator"] is not None
    assert world["http://w3id.org/owl-memory#MemoryItem"] in world["http://w3id.org/owl-memory#Episode"].is_a


@pytest.mark.skipif(shutil.which("java") is None, reason="HermiT needs Java on PATH")
def test_hermit_finds_it_consistent_and_catches_a_two_kind_item():
    world, onto = _world_with_ontology()
    owlready2.sync_reasoner(world, debug=0)  # raises OwlReadyInconsistentOntologyError when inconsistent
    assert not list(world.inconsistent_classes())
    with onto:
        both = world["http://w3id.org/owl-memory#Principle"]("both")
        both.is_a.append(world["http://w3id.org/owl-memory#AntiPattern"])
    with pytest.raises(owlready2.OwlReadyInconsistentOntologyError):
        owlready2.sync_reasoner(world, debug=0)
