"""What a run's ontology says about the ontologies and terms memory items were learned on: `OntologyContext`."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class OntologyContext:
    """A run's ontology, the ontologies whose items carry over to it and the terms aligned with its own.

    Args:
        ontology: the run's ontology IRI (normalized: no trailing # or /).
        carried: ontologies whose items serve it, in the order they are followed (its version IRI, prior versions,
            versions it is backward compatible with, ontologies it is owl:sameAs), normalized.
        incompatible: ontologies it declares owl:incompatibleWith (never carried over, nor their terms).
        aligned: (own term, (terms of other ontologies it is owl:equivalentClass / owl:equivalentProperty /
            owl:sameAs, sorted)) pairs, sorted by own term.
    """

    ontology: str
    carried: tuple[str, ...] = ()
    incompatible: tuple[str, ...] = ()
    aligned: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def equivalents(self, term: str) -> tuple[str, ...]:
        """The other ontologies' terms aligned with `term` (none when it has no alignment)."""
        return dict(self.aligned).get(str(term), ())

    def foreign_terms(self) -> tuple[str, ...]:
        """Every other ontology's term aligned with one of the run's own, sorted."""
        return tuple(sorted({t for _, terms in self.aligned for t in terms}))

    def to_dict(self) -> dict:
        """JSON-compatible form; from_dict(to_dict()) == self."""
        out = asdict(self)
        out["aligned"] = {own: list(terms) for own, terms in self.aligned}
        return {k: list(v) if isinstance(v, tuple) else v for k, v in out.items()}

    @classmethod
    def from_dict(cls, d: dict) -> OntologyContext:
        """An OntologyContext from its dict form."""
        aligned = tuple(sorted((str(k), tuple(v)) for k, v in dict(d.get("aligned") or {}).items()))
        return cls(str(d["ontology"]), tuple(d.get("carried", ())), tuple(d.get("incompatible", ())), aligned)
