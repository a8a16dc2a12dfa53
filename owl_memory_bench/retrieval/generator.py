"""Generated items and agent queries for the retrieval benchmark: deterministic (seeded), Zipf-like words."""

from __future__ import annotations

import random

from owl_memory import ItemSpec, Memory

FORMAT = 2  # bump when the generator changes: it is part of the cache key
SEED = 20261122
VALIDATED_BUILD = 200  # items of every memory written through Memory.add (pyshacl) before the bulk path
SUPERSEDED_SHARE = 100  # one item in this many is superseded (through Memory.supersede, validated)
K = 5
KINDS = ("Principle", "Procedure", "AntiPattern", "Constraint")
ONTOLOGIES = tuple(f"http://example.org/{n}#" for n in (
    "prov foaf skos dcat schema geo time org sosa ssn qudt gist fibo bfo obi go chebi uberon envo pato iao ro cl "
    "doid hp mondo ncit snomed dbo wd crm dcterms vcard odrl adms locn gr bibo fabio cito oa sioc ldp void shex "
    "brick saref seas pext ical").split())
TASK_TYPES = tuple(
    "shacl repair|sparql query|ontology alignment|class design|property design|cq authoring|data validation|"
    "mapping|entity linking|taxonomy cleanup|axiom debugging|reasoner setup|import resolution|naming|"
    "documentation|versioning|provenance capture|unit modelling|temporal modelling|geo modelling".split("|"))
WORDS = tuple(
    "class property domain range shape constraint violation mincount maxcount datatype literal iri blank node "
    "subclass superclass individual axiom restriction cardinality inverse functional transitive symmetric "
    "label comment annotation import ontology vocabulary namespace prefix query select construct ask filter "
    "optional union graph triple pattern binding variable value path sequence alternative closed pattern "
    "language tag string integer date decimal boolean unit quantity measurement observation sensor feature "
    "agent activity entity generation derivation attribution person organization place event interval instant "
    "concept scheme broader narrower exact match mapping alignment equivalent disjoint deprecated version "
    "release changelog review test fixture report result focus severity message repair patch delta minimal "
    "rollback verify conform reasoner inference consistency satisfiable hermit pellet owl rdf turtle jsonld "
    "parse serialize export load cache index search retrieve rank score priority confidence exception general "
    "rule principle procedure antipattern pitfall avoid prefer always never check before after when unless "
    "endpoint timeout limit offset order group count distinct aggregate federated service remote local".split())
TAGS = ("sparql", "shacl", "owl", "rdf", "skos", "prov", "units", "time", "geo", "naming", "perf", "safety")
SHAPES = ("ontology+task+text", "ontology+task", "ontology+kinds", "text")
_WEIGHTS = tuple(1 / (r + 1) ** 0.8 for r in range(len(WORDS)))  # Zipf-like: a few common words, a long tail


def words(rng: random.Random, n: int) -> list[str]:
    """n vocabulary words drawn with a Zipf-like skew."""
    return rng.choices(WORDS, weights=_WEIGHTS, k=n)


def item_spec(rng: random.Random, n: int) -> ItemSpec:
    """The n-th generated item (about 15 triples once stored)."""
    title = " ".join(words(rng, rng.randint(3, 8)))
    onto = rng.sample(ONTOLOGIES, 2 if rng.random() < 0.15 else 1)
    return ItemSpec(
        kind=rng.choice(KINDS), title=title,
        summary=f"Use when {' '.join(words(rng, 5))}; not when {' '.join(words(rng, 3))}.",
        content=f"# {title}\nitem {n}\n" + "\n".join(f"{s + 1}. {' '.join(words(rng, 12))}" for s in range(4)),
        applies_to=onto, task_types=[rng.choice(TASK_TYPES)], tags=[rng.choice(TAGS)],
        priority=rng.randint(0, 9), confidence=round(rng.uniform(0.05, 0.99), 2),
    )


def item_specs(size: int, start: int = 0, salt: str = "items") -> list[ItemSpec]:
    """Deterministic item specs number start..start+size-1."""
    rng = random.Random(f"{SEED}-{salt}-{start}-{size}")
    return [item_spec(rng, start + n) for n in range(size)]


def supersede_some(m: Memory, specs: list[ItemSpec], n: int) -> int:
    """Supersede n items (each by another random item) through the validated Memory.supersede."""
    rng = random.Random(f"{SEED}-supersede-{len(specs)}")
    ids = [s.id for s in specs]
    pairs = [(old, new) for old, new in zip(rng.sample(ids, n), rng.sample(ids, n), strict=True) if old != new]
    for old, new in pairs:
        m.supersede(old, new)
    return len(pairs)


def query_set(n: int, salt: str) -> list[tuple[str, dict]]:
    """n deterministic agent queries cycling over SHAPES: (shape, Memory.search keyword arguments)."""
    rng = random.Random(f"{SEED}-queries-{salt}")
    out = []
    for q in range(n):
        shape = SHAPES[q % len(SHAPES)]
        kw: dict = {"k": K}
        if "ontology" in shape:
            kw["ontology"] = rng.choice(ONTOLOGIES)
        if "task" in shape:
            kw["task_type"] = rng.choice(TASK_TYPES)
        if "kinds" in shape:
            kw["kinds"] = rng.sample(KINDS, rng.randint(1, 2))
        if "text" in shape:
            kw["text"] = " ".join(words(rng, rng.randint(2, 4)))
        out.append((shape, kw))
    return out


