"""Hierarchy families: direct and transitive subclasses, superclasses, subproperties and superproperties."""

from __future__ import annotations

from .registry import family

NAMED = "FILTER(isIRI(?answer) && ?answer != ?entity)"
SUBCLASSES = f"?answer rdfs:subClassOf ?entity . {NAMED}"
SUPERCLASSES = f"?entity rdfs:subClassOf ?answer . {NAMED}"
SUBPROPERTIES = f"?answer rdfs:subPropertyOf ?entity . {NAMED}"
SUPERPROPERTIES = f"?entity rdfs:subPropertyOf ?answer . {NAMED}"
THROUGH = "directly or through other {0}"


@family("subclasses", "hierarchy", needs="a class with a named subclass", where=SUBCLASSES)
def subclasses(view, b) -> str:
    """Direct subclasses of a class."""
    return f"Which classes are direct subclasses of the class {view.named(b['entity'])}?"


@family("superclasses", "hierarchy", needs="a class with a named superclass", where=SUPERCLASSES)
def superclasses(view, b) -> str:
    """Direct named superclasses of a class."""
    return f"Which named classes is the class {view.named(b['entity'])} a direct subclass of?"


@family("all-subclasses", "hierarchy", needs="a class with subclasses two levels down",
        where=f"?answer rdfs:subClassOf+ ?entity . {NAMED}", contrast="subclasses")
def all_subclasses(view, b) -> str:
    """Subclasses of a class at any depth."""
    return f"Which classes are subclasses of the class {view.named(b['entity'])}, {THROUGH.format('classes')}?"


@family("all-superclasses", "hierarchy", needs="a class with superclasses two levels up",
        where=f"?entity rdfs:subClassOf+ ?answer . {NAMED}", contrast="superclasses")
def all_superclasses(view, b) -> str:
    """Named superclasses of a class at any height."""
    return f"Which named classes is the class {view.named(b['entity'])} a subclass of, {THROUGH.format('classes')}?"


@family("subproperties", "hierarchy", needs="a property with a named subproperty", where=SUBPROPERTIES)
def subproperties(view, b) -> str:
    """Direct subproperties of a property."""
    return f"Which properties are direct subproperties of the property {view.named(b['entity'])}?"


@family("superproperties", "hierarchy", needs="a property with a named superproperty", where=SUPERPROPERTIES)
def superproperties(view, b) -> str:
    """Direct superproperties of a property."""
    return f"Which properties is the property {view.named(b['entity'])} a direct subproperty of?"


@family("all-subproperties", "hierarchy", needs="a property with subproperties two levels down",
        where=f"?answer rdfs:subPropertyOf+ ?entity . {NAMED}", contrast="subproperties")
def all_subproperties(view, b) -> str:
    """Subproperties of a property at any depth."""
    return (f"Which properties are subproperties of the property {view.named(b['entity'])}, "
            f"{THROUGH.format('properties')}?")


@family("all-superproperties", "hierarchy", needs="a property with superproperties two levels up",
        where=f"?entity rdfs:subPropertyOf+ ?answer . {NAMED}", contrast="superproperties")
def all_superproperties(view, b) -> str:
    """Superproperties of a property at any height."""
    return (f"Which properties is the property {view.named(b['entity'])} a subproperty of, "
            f"{THROUGH.format('properties')}?")
