"""Curation gates for packs: how general each item is, by a documented rule, and which items repeat another.

An item starts at generalization 1.0 and loses
- 0.5 when it names an IRI outside the standard vocabularies (STANDARD) and outside the namespaces it applies to
  (`applies_to`): a hard-coded instance or another ontology's term; an item that applies to no ontology (universal)
  is flagged for any such IRI, and for a CURIE whose prefix is not a standard one (STANDARD_PREFIXES: `prov:Entity`
  in a universal item names one ontology, as a full IRI would);
- 0.25 when it is a Procedure with neither a compiled action (`action_schema`) nor steps in its content (numbered or
  bulleted lines): advice that is not procedural;
- 0.25 when it repeats another item of the pack: the same title (case and spacing folded), or a near-duplicate
  (the words of title and summary overlap by Jaccard >= NEAR).
A score below 1.0 always comes with the flags that explain it. IRIs are read from the item's text fields and its
action schema as JSON.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ..model import ItemSpec
from ..vocab import CONVENTIONAL_PREFIXES

STANDARD_PREFIXES = ("rdf", "rdfs", "owl", "xsd", "sh", "skos", "dc", "dcterms")  # vocabularies every item may name
STANDARD = (*(ns for p in STANDARD_PREFIXES for ns in CONVENTIONAL_PREFIXES[p]), "http://w3id.org/owl-memory")
NEAR = 0.8
_CURIE = re.compile(r"(?<![\w/#:.-])([a-z][a-z0-9]*):[A-Za-z_][\w-]*")
_IRI = re.compile(r"https?://[^\s<>\"'{}|\\^`)\],]+")
_STEP = re.compile(r"^\s*(\d+[.)]|[-*•])\s+\S", re.M)
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Curated:
    """One item's curation: its id and title, its generalization score and the flags that lowered it."""

    id: str
    title: str
    generalization: float
    flags: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        """JSON form."""
        return {"id": self.id, "title": self.title, "generalization": self.generalization, "flags": list(self.flags)}


def curate(specs: list[ItemSpec]) -> list[Curated]:
    """Each item scored and flagged by the module's rule, in order (duplicates are flagged on the later one)."""
    seen_titles: dict[str, str] = {}
    seen_words: list[tuple[str, set[str]]] = []
    out = []
    for spec in specs:
        flags, score = [], 1.0
        foreign = _foreign_iris(spec) + ([] if spec.applies_to else _foreign_curies(spec))
        if foreign:
            universal = "universal item (applies to no ontology) " if not spec.applies_to else ""
            flags.append(f"{universal}names {len(foreign)} hard-coded term(s), e.g. {foreign[0][:80]}")
            score -= 0.5
        if spec.kind == "Procedure" and spec.action_schema is None and not _STEP.search(spec.content):
            flags.append("a Procedure with no compiled action and no steps")
            score -= 0.25
        key, words = " ".join(spec.title.casefold().split()), set(_WORD.findall(f"{spec.title} {spec.summary}".lower()))
        twin = seen_titles.get(key) or next((i for i, w in seen_words if _jaccard(w, words) >= NEAR), None)
        if twin is not None:
            flags.append(f"{'duplicate title' if key in seen_titles else 'near-duplicate'} of {twin}")
            score -= 0.25
        seen_titles.setdefault(key, spec.id)
        seen_words.append((spec.id, words))
        out.append(Curated(spec.id, spec.title, round(max(score, 0.0), 2), tuple(flags)))
    return out


def _foreign_iris(spec: ItemSpec) -> list[str]:
    """IRIs the item names outside the standard vocabularies and the namespaces it applies to, sorted."""
    schema = json.dumps(spec.action_schema.to_json()) if spec.action_schema is not None else ""
    text = " ".join([spec.title, spec.summary, spec.content, spec.verification_hook or "", schema])
    own = tuple(spec.applies_to) + STANDARD
    return sorted({iri.rstrip(".;:") for iri in _IRI.findall(text) if not iri.startswith(own)})


def _foreign_curies(spec: ItemSpec) -> list[str]:
    """CURIEs in the item's text whose prefix is not a standard vocabulary's, sorted."""
    text = " ".join([spec.title, spec.summary, spec.content, spec.verification_hook or ""])
    return sorted({m.group(0) for m in _CURIE.finditer(text)
                   if m.group(1) not in (*STANDARD_PREFIXES, "om", "http", "https", "urn")})


def _jaccard(a: set[str], b: set[str]) -> float:
    """|a ∩ b| / |a ∪ b| (0 for two empty sets)."""
    return len(a & b) / len(a | b) if a | b else 0.0
