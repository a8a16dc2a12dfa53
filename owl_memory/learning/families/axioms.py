"""Axiom families: OWL restrictions on a class (the properties they constrain, the classes they require),
disjointness, equivalence, instances of a class, and property characteristics."""

from __future__ import annotations

from .registry import LIST_MEMBER, family

RESTRICTION = ("?entity (rdfs:subClassOf|owl:equivalentClass) ?restricted . "
               "?restricted (owl:intersectionOf/rdf:rest*/rdf:first)? ?restriction . ")
MEMBERS = "rdf:rest*/rdf:first"
CHARACTERISTICS = {"http://www.w3.org/2002/07/owl#TransitiveProperty": "transitive",
                   "http://www.w3.org/2002/07/owl#SymmetricProperty": "symmetric",
                   "http://www.w3.org/2002/07/owl#FunctionalProperty": "functional",
                   "http://www.w3.org/2002/07/owl#InverseFunctionalProperty": "inverse functional",
                   "http://www.w3.org/2002/07/owl#AsymmetricProperty": "asymmetric",
                   "http://www.w3.org/2002/07/owl#ReflexiveProperty": "reflexive",
                   "http://www.w3.org/2002/07/owl#IrreflexiveProperty": "irreflexive"}


@family("restricted-properties", "axiom", needs="a class with an OWL restriction (owl:onProperty) as superclass",
        where=RESTRICTION + "?restriction owl:onProperty ?answer . FILTER(isIRI(?answer))")
def restricted_properties(view, b) -> str:
    """The properties the OWL restrictions on a class constrain."""
    return f"Which properties do the OWL restrictions on the class {view.named(b['entity'])} constrain?"


@family("restriction-values", "axiom",
        needs="a class with an owl:someValuesFrom, owl:allValuesFrom or owl:onClass restriction naming a class",
        where=RESTRICTION + "?restriction owl:onProperty ?property ; "
              "(owl:someValuesFrom|owl:allValuesFrom|owl:onClass) ?filler . "
              f"?filler {LIST_MEMBER} ?answer . FILTER(isIRI(?answer))",
        binds=("entity", "property"), about=("entity", "property"))
def restriction_values(view, b) -> str:
    """The classes a class's restrictions on one property require (someValuesFrom, allValuesFrom, onClass)."""
    return (f"Which classes do the OWL restrictions on the class {view.named(b['entity'])} require for the property "
            f"{view.named(b['property'])} (someValuesFrom, allValuesFrom or onClass)?")


@family("disjoint", "axiom", needs="a class declared disjoint with another (owl:disjointWith, owl:AllDisjointClasses "
        "or owl:disjointUnionOf)",
        where="{ ?entity owl:disjointWith ?answer } UNION { ?answer owl:disjointWith ?entity } UNION "
              f"{{ ?all a owl:AllDisjointClasses ; owl:members ?list . ?list {MEMBERS} ?entity , ?answer }} UNION "
              f"{{ ?union owl:disjointUnionOf ?list . ?list {MEMBERS} ?entity , ?answer }} "
              "FILTER(isIRI(?answer) && ?answer != ?entity)")
def disjoint(view, b) -> str:
    """The classes declared disjoint with a class."""
    return f"Which classes are declared disjoint with the class {view.named(b['entity'])}?"


@family("equivalent", "axiom", needs="a class declared equivalent to a named class (owl:equivalentClass)",
        where="{ ?entity owl:equivalentClass ?answer } UNION { ?answer owl:equivalentClass ?entity } "
              "FILTER(isIRI(?answer) && ?answer != ?entity)")
def equivalent(view, b) -> str:
    """The named classes declared equivalent to a class."""
    return f"Which named classes are declared equivalent to the class {view.named(b['entity'])}?"


@family("instances", "axiom", needs="a term declared an instance (rdf:type) of a class of the ontology",
        where="?answer a ?entity . FILTER(isIRI(?answer) && isIRI(?entity))")
def instances(view, b) -> str:
    """The terms declared instances of a class."""
    return f"Which terms are declared instances (rdf:type) of {view.named(b['entity'])}?"


@family("characteristic", "axiom", needs="a property declared transitive, symmetric, functional, ...",
        where="VALUES ?kind { " + " ".join(f"<{k}>" for k in CHARACTERISTICS) + " } ?answer a ?kind . "
              "FILTER(isIRI(?answer))",
        binds=("kind",), about=())
def characteristic(view, b) -> str:
    """The properties the ontology declares with one characteristic (transitive, functional, ...)."""
    return f'Which properties does the ontology "{view.title}" declare {CHARACTERISTICS[str(b["kind"])]}?'
