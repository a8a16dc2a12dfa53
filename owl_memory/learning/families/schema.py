"""Schema families: the domain and range of a property (rdfs:domain / rdfs:range, or schema.org's domainIncludes /
rangeIncludes; a union counts as its member classes), the properties a class is the domain or range of, and
inverse properties."""

from __future__ import annotations

from .registry import LIST_MEMBER, family


def declared(via: str, schema: str, subject: str, value: str) -> str:
    """The pattern `subject` declares `value` as (a member of) its rdfs:`via` or schema:`schema`."""
    return (f"VALUES ?via {{ rdfs:{via} <http://schema.org/{schema}> <https://schema.org/{schema}> }} "
            f"{subject} ?via ?declared . ?declared {LIST_MEMBER} {value} . FILTER(isIRI(?answer))")


DOMAIN = declared("domain", "domainIncludes", "?entity", "?answer")
RANGE = declared("range", "rangeIncludes", "?entity", "?answer")
WITH_DOMAIN = declared("domain", "domainIncludes", "?answer", "?entity")
WITH_RANGE = declared("range", "rangeIncludes", "?answer", "?entity")


@family("domain", "schema", needs="a property with a declared domain", where=DOMAIN)
def domain(view, b) -> str:
    """The classes that make up a property's domain."""
    return f"Which classes make up the domain of the property {view.named(b['entity'])}?"


@family("range", "schema", needs="a property with a declared range", where=RANGE)
def range_(view, b) -> str:
    """The classes or datatypes that make up a property's range."""
    return f"Which classes or datatypes make up the range of the property {view.named(b['entity'])}?"


@family("properties-with-domain", "schema", needs="a class that is the domain of a property", where=WITH_DOMAIN)
def properties_with_domain(view, b) -> str:
    """The properties whose domain includes a class."""
    return f"Which properties have the class {view.named(b['entity'])} in their domain?"


@family("properties-with-range", "schema", needs="a class or datatype that is the range of a property",
        where=WITH_RANGE)
def properties_with_range(view, b) -> str:
    """The properties whose range includes a class or datatype."""
    return f"Which properties have {view.named(b['entity'])} in their range?"


@family("inverse", "schema", needs="a property with a declared inverse (owl:inverseOf)",
        where="{ ?entity owl:inverseOf ?answer } UNION { ?answer owl:inverseOf ?entity } "
              "FILTER(isIRI(?answer) && ?answer != ?entity)")
def inverse(view, b) -> str:
    """The properties declared inverse to a property, in either direction."""
    return f"Which properties are declared inverse to the property {view.named(b['entity'])}?"
