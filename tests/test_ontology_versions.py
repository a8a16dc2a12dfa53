"""Ontology terms and versions: ontology IRIs compared without a trailing # or /, items about classes and properties
(filters and cards), and searches that follow a run's ontology versions and alignments. The defining SELECT, the
embedded accelerator and a SPARQL server agree on every shape."""

import itertools
import json
import random
import sqlite3

import pytest
from click.testing import CliRunner
from rdflib import Graph
from test_export_owl import owlcheck  # noqa: F401  (the OWLAPI check, a fixture)

from owl_memory import ItemSpec, Memory
from owl_memory.cli import main
from owl_memory.errors import ConfigError
from owl_memory.model import AgentQuery, Iteration, OntologyContext, sha256
from owl_memory.store import retrieval
from owl_memory.store.alignment import followed, ontology_context
from owl_memory.store.copy import copy_memory
from owl_memory.store.embedded import postings
from owl_memory.store.embedded.world import combination_skipped
from owl_memory.vocab import KINDS, ontology_iri

LIB = "http://example.org/library"
SPELLINGS = [LIB, LIB + "#", LIB + "/", "http://example.org/other#"]
CLASSES = [f"{LIB}#{c}" for c in ("Book", "Author", "Loan")]
PROPERTIES = [f"{LIB}#{p}" for p in ("isbn", "wrote")]


def generated(seed: int = 5) -> list[ItemSpec]:
    """Rules over every spelling of one ontology, about classes and properties, and exceptions of some of them."""
    rng = random.Random(seed)

    def item(n: int, scope="general", refines=None) -> ItemSpec:
        return ItemSpec(rng.choice(KINDS[:4]), f"Library item {n}", f"Use when {rng.choice(['books', 'loans'])}.",
                        f"body {n}", applies_to=rng.sample(SPELLINGS, rng.randint(1, 2)),
                        task_types=rng.sample(["cq", "repair"], rng.randint(0, 1)),
                        about_classes=rng.sample(CLASSES, rng.randint(0, 2)),
                        about_properties=rng.sample(PROPERTIES, rng.randint(0, 1)), priority=rng.randint(0, 3),
                        confidence=rng.choice([0.2, 0.5, 0.9]), scope=scope, refines=refines)

    rules = [item(n) for n in range(90)]
    return rules + [item(1000 + n, "exception", rng.choice(rules).id) for n in range(20)]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A generated memory (two superseded, two archived items) and its validated export."""
    path = tmp_path_factory.mktemp("versions")
    with Memory(path / "m") as m:
        ids = m.add_many(generated())
        m.supersede(ids[3], ids[4])
        m.archive(ids[5])
        m.archive(ids[6])
        m.export(path / "export.ttl")
    g = Graph()
    g.parse(path / "export.ttl", format="turtle")
    return path / "m", g


def shapes():
    """Shapes without text over every ontology spelling, about filters, a task type and kinds."""
    filters = {"about_class": CLASSES[0], "about_property": PROPERTIES[0], "task_type": "cq"}
    ks = itertools.cycle((3, 50))
    for ontology in [None, *SPELLINGS]:
        for r in range(3):
            for names in itertools.combinations(filters, r):
                for kinds in (None, ["Principle", "procedure"]):
                    yield {"ontology": ontology, **{n: filters[n] for n in names}, "kinds": kinds, "k": next(ks)}


def test_every_spelling_of_an_ontology_finds_the_same_items(built):
    path, _ = built
    with Memory(path) as m:
        found = [[h.id for h in m.search(ontology=s, k=50)] for s in SPELLINGS[:3]]
        assert found[0] == found[1] == found[2] and len(found[0]) >= 40
        for h in m.search(ontology=LIB + "#", k=50):
            assert LIB in {ontology_iri(a) for a in h.applies_to}


@pytest.mark.slow
def test_defining_sparql_and_embedded_agree_with_spellings_and_about_filters(built):
    path, exported = built
    checked = 0
    with Memory(path) as m:
        for kw in shapes():
            fast = [h.id for h in m.search(**kw)]
            assert fast == retrieval.run_defining(exported, retrieval.search_query(**kw)), kw
            checked += bool(fast)
            if kw.get("about_class"):
                assert all(kw["about_class"] in h.about_classes for h in m.search(**kw))
    assert checked >= 30


@pytest.fixture(scope="module")
def pair(built, oxigraph):
    """The generated memory embedded and copied onto an Oxigraph server."""
    from owl_memory_bench.servers import drop_memory_graphs

    drop_memory_graphs(oxigraph.url)
    with Memory(built[0]) as local, Memory(oxigraph.url) as server:
        copy_memory(local, server)
        yield local, server


@pytest.mark.parametrize("text", [None, "books", "library loans"])
def test_server_agrees_with_embedded_on_spellings_about_filters_and_text(pair, text):
    local, server = pair
    for kw in shapes():
        want = [(h.id, h.score, h.about_classes, h.about_properties) for h in local.search(text, **kw)]
        assert [(h.id, h.score, h.about_classes, h.about_properties) for h in server.search(text, **kw)] == want, kw


def test_hostile_filters_are_bound_and_refused_at_the_edge(tmp_path):
    with Memory(tmp_path / "m") as m:
        m.add(ItemSpec("Principle", "Use ISBN", "Use when matching books.", "x", applies_to=[LIB],
                       about_classes=[CLASSES[0]]))
        for bad in ['http://x/a"> ?s ?p ?o', "http://x/a b", "http://x/\nb", "#", "/", "http://x/a>"]:
            assert m.search(ontology=bad) == [] and m.search(about_class=bad) == []
            with pytest.raises(ConfigError):
                retrieval.check_filters(ontology=bad, about_class=CLASSES[0])
    for option in ("--ontology", "--about-class", "--about-property"):
        r = CliRunner().invoke(main, ["search", option, 'http://x/a"> }', "--memory", str(tmp_path / "m")])
        assert r.exit_code == 2 and "must be an IRI" in r.output


def test_cards_show_about_terms_and_the_cli_filters_by_them(tmp_path):
    mem = str(tmp_path / "m")
    run = CliRunner().invoke
    assert run(main, ["add", "Principle", "Use ISBN", "Use when matching books.", "--content", "x",
                      "--applies-to", LIB, "--about-class", CLASSES[0], "--about-property", PROPERTIES[0],
                      "--memory", mem]).exit_code == 0
    r = run(main, ["search", "--ontology", LIB + "#", "--about-class", CLASSES[0], "--memory", mem])
    assert r.exit_code == 0 and "[about Book, isbn]" in r.output
    assert "no items match" in run(main, ["search", "--about-class", CLASSES[1], "--memory", mem]).output
    with Memory(mem) as m:
        item = m.get(m.search(about_property=PROPERTIES[0])[0].id)
        assert item.about_classes == (CLASSES[0],) and item.about_properties == (PROPERTIES[0],)


def test_a_memory_of_store_format_5_is_rekeyed_on_open(tmp_path):
    """Keys written before ontology IRIs were normalized name the IRI as written; the first writable open rewrites
    them, so every spelling finds the old items, and new items join them."""
    path = tmp_path / "m"
    with Memory(path) as m:
        old = m.add(ItemSpec("Principle", "Old advice", "Use when old.", "x", applies_to=[LIB + "#"]))
        db, p = m.backend.db, m.backend.world.terms[retrieval.OM.appliesToOntology]
        raw = m.backend.world.quadstore.storid(retrieval.URIRef(LIB + "#"))
        keys = db.execute("SELECT keys FROM om_fts").fetchone()[0]
        skipped = combination_skipped(m.backend.world.terms)
    with sqlite3.connect(path / "memory.sqlite3") as db:  # the key as format 5 wrote it: the IRI as written
        db.execute("UPDATE om_fts SET keys = ?", (" ".join(t if not t.startswith(f"k{p}x") else f"k{p}x{raw}"
                                                           for t in keys.split()),))
        postings.build(db, skipped)  # its order and postings tables from those keys
        db.execute("PRAGMA user_version = 5")
    assert _read_only_search(path) == [[old]] * 3  # read-only: the spelling it stored
    with Memory(path) as m:
        new = m.add(ItemSpec("Principle", "New advice", "Use when new.", "y", applies_to=[LIB]))
        assert m.backend.db.execute("PRAGMA user_version").fetchone()[0] == 6
        for spelling in SPELLINGS[:3]:
            assert {h.id for h in m.search(ontology=spelling)} == {old, new}


def _read_only_search(path):
    """Each spelling's search in a read-only copy of the memory at `path`, run by a process that cannot write it."""
    import shutil
    import tempfile
    from pathlib import Path

    from test_damage import _as_reader

    root = Path(tempfile.mkdtemp())
    root.chmod(0o755)
    locked = root / "locked"
    shutil.copytree(path, locked)
    for f in [*locked.iterdir(), locked]:
        f.chmod(0o555 if f.is_dir() else 0o444)

    def searches(where):
        """Ids per spelling, and whether the memory stayed at format 5 (not rekeyed)."""
        with Memory(where) as m:
            assert not m.backend.world.normalized
            return [[h.id for h in m.search(ontology=s)] for s in SPELLINGS[:3]]

    try:
        return _as_reader(searches, locked)
    finally:
        locked.chmod(0o755)
        shutil.rmtree(root)


# ---- versions and alignments ----
V1, V2 = "http://example.org/lib/v1", "http://example.org/lib/v2"


def _v2(links: str) -> Graph:
    """A v2 ontology graph with the given Turtle statements about v1 (prefix v1: and v2: for their terms)."""
    g = Graph()
    g.parse(data=f"""@prefix owl: <http://www.w3.org/2002/07/owl#> . @prefix v1: <{V1}#> . @prefix v2: <{V2}#> .
        <{V2}> a owl:Ontology . v2:Volume a owl:Class . v2:title a owl:DatatypeProperty . {links}""", format="turtle")
    return g


def test_context_reads_versions_alignments_and_stops_at_incompatible():
    g = _v2(f"""<{V2}> owl:priorVersion <{V1}#> ; owl:versionIRI <{V2}/2.0> .
        <{V1}#> owl:priorVersion <http://example.org/lib/v0> .
        <http://example.org/lib/v0> owl:priorVersion <{V2}> .
        v2:Volume owl:equivalentClass v1:Book . v1:Book owl:equivalentClass <http://example.org/old#Tome> .
        v2:title owl:equivalentProperty v1:name .""")
    c = ontology_context(g)
    assert c.ontology == V2 and c.carried == (V1, f"{V2}/2.0", "http://example.org/lib/v0")  # the cycle ends
    assert c.equivalents(f"{V2}#Volume") == (f"{V1}#Book", "http://example.org/old#Tome")  # through a chain
    assert c.equivalents(f"{V2}#title") == (f"{V1}#name",)
    assert OntologyContext.from_dict(c.to_dict()) == c
    blocked = ontology_context(_v2(f"""<{V2}> owl:priorVersion <{V1}> ; owl:incompatibleWith <{V1}/> .
        v2:Volume owl:equivalentClass v1:Book ."""))
    assert blocked.carried == () and blocked.incompatible == (V1,) and blocked.aligned == ()


@pytest.fixture
def versions(tmp_path):
    """Items learned on v1 (one about v1:Book), one on v2, one on an unrelated ontology."""
    with Memory(tmp_path / "m") as m:
        ids = {"book": m.add(ItemSpec("Procedure", "Match books by ISBN", "Use when matching books.", "a",
                                      applies_to=[V1 + "#"], about_classes=[f"{V1}#Book"], priority=3)),
               "v1": m.add(ItemSpec("Principle", "Bind values", "Use when querying.", "b", applies_to=[V1])),
               "v2": m.add(ItemSpec("Principle", "Prefer titles", "Use when querying.", "c", applies_to=[V2])),
               "other": m.add(ItemSpec("Principle", "Other", "Use when querying.", "d",
                                       applies_to=["http://example.org/zoo"]))}
        yield m, ids


def test_items_learned_on_v1_serve_v2_after_the_exact_ones_marked(versions):
    m, ids = versions
    assert [h.id for h in m.search(ontology=V2)] == [ids["v2"]]  # exact only without a context
    context = ontology_context(_v2(f"<{V2}> owl:priorVersion <{V1}> ."))
    hits = m.search(ontology=V2, context=context)
    assert [h.id for h in hits] == [ids["v2"], ids["book"], ids["v1"]]
    assert [h.carried_over_from for h in hits] == [None, V1, V1]
    assert m.search(context=context) == hits  # the context's ontology is the default filter
    renamed = m.search(about_class=f"{V2}#Volume", context=ontology_context(
        _v2(f"<{V2}> owl:priorVersion <{V1}> . v2:Volume owl:equivalentClass v1:Book .")))
    assert [(h.id, h.carried_over_from) for h in renamed] == [(ids["book"], V1)]


def test_an_aligned_class_alone_carries_items_about_it(versions):
    m, ids = versions
    hits = m.search(ontology=V2, context=ontology_context(_v2("v2:Volume owl:equivalentClass v1:Book .")))
    assert [(h.id, h.carried_over_from) for h in hits] == [(ids["v2"], None), (ids["book"], f"{V1}#Book")]


def test_incompatible_with_overrides_prior_version(versions):
    m, ids = versions
    context = ontology_context(_v2(f"""<{V2}> owl:priorVersion <{V1}> ; owl:incompatibleWith <{V1}> .
        v2:Volume owl:equivalentClass v1:Book ."""))
    assert [h.id for h in m.search(ontology=V2, context=context)] == [ids["v2"]]


def test_followed_search_agrees_on_defining_sparql_embedded_and_server(versions, server_url, tmp_path):
    m, ids = versions
    context = ontology_context(_v2(f"<{V2}> owl:priorVersion <{V1}> . v2:Volume owl:equivalentClass v1:Book ."))
    m.export(tmp_path / "export.ttl")
    exported = Graph().parse(tmp_path / "export.ttl", format="turtle")
    with Memory(server_url) as server:
        copy_memory(m, server)
        for kw in ({}, {"about_class": f"{V2}#Volume"}, {"kinds": ["Procedure"]}, {"k": 1}):
            q = retrieval.search_query(ontology=V2, **kw)
            defined = [(retrieval.Scored(i, 0.0), mark) for i, mark in
                       [(r.id, mark) for r, mark in followed(lambda s: [retrieval.Scored(i, 0.0) for i in
                                                                         retrieval.run_defining(exported, s)],
                                                             q, context)]]
            want = [(r.id, mark) for r, mark in defined]
            assert [(h.id, h.carried_over_from) for h in m.search(ontology=V2, context=context, **kw)] == want
            assert [(h.id, h.carried_over_from) for h in server.search(ontology=V2, context=context, **kw)] == want


# ---- extraction ----
def test_extracted_items_are_about_the_terms_their_query_used_not_the_task_constants():
    from owl_memory.learning.extraction import RunRecord, extract
    from owl_memory.model.judgments import Judgment

    g = Graph().parse(data=f"""@prefix owl: <http://www.w3.org/2002/07/owl#> . @prefix ex: <{LIB}#> .
        @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
        <{LIB}> a owl:Ontology . ex:Book a owl:Class . ex:Tolkien a owl:NamedIndividual ; rdfs:label "Tolkien" .
        ex:isbn a owl:DatatypeProperty . ex:author a owl:ObjectProperty .""", format="turtle")
    query = (f"PREFIX ex: <{LIB}#> PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> "
             "SELECT ?b ?i WHERE { ?b a ex:Book ; ex:isbn ?i ; ex:author ex:Tolkien ; rdfs:label ?l }")
    events = (Iteration(0, "", f"r = ontology_query({query!r})", "2 rows", 6),
              AgentQuery("ontology_query", "ontology", query, sha256(query), rows=2))
    record = RunRecord("List the ISBNs of works by Tolkien.", "lookup", LIB + "#", "ex:x", "run-1", None, events, g)
    spec = extract(record, Judgment(True, "ok", judge="answer")).items[0]
    assert spec.about_classes == (f"{LIB}#Book",)
    assert spec.about_properties == (f"{LIB}#author", f"{LIB}#isbn")  # not rdfs:label, not the constant Tolkien
    assert "$p" in json.dumps(spec.action_schema.to_json())  # Tolkien is lifted to a parameter, not kept as scope


# ---- A1 injection and L1 anti-patterns on a real ontology and its next version ----
SKOS = "http://www.w3.org/2004/02/skos/core"
SKOS2 = "http://example.org/skos/v2"


def _skos_v2(shared_data, tmp_path, links: str):
    """SKOS (v1, as published) and a v2 file: the same terms under a new ontology IRI, skos:Concept renamed to
    v2:Idea, declaring `links` about v1."""
    from rdflib.namespace import OWL, RDF

    g = Graph().parse(shared_data / "ontologies" / "skos.ttl")
    g.remove((None, RDF.type, OWL.Ontology))
    g.parse(data=f"""@prefix owl: <http://www.w3.org/2002/07/owl#> . @prefix skos: <{SKOS}#> .
        @prefix v2: <{SKOS2}#> . <{SKOS2}> a owl:Ontology . v2:Idea a owl:Class . {links}""", format="turtle")
    path = tmp_path / "skos-v2.ttl"
    g.serialize(path, format="turtle")
    return path, g


@pytest.fixture
def learned_on_skos(tmp_path):
    """Items learned on SKOS v1: an AntiPattern about skos:Concept and a Procedure (learned: generated by a run)."""
    with Memory(tmp_path / "m") as m:
        anti = m.add(ItemSpec("AntiPattern", "Concepts need one preferred label", "Use before labelling concepts.",
                              "- never two skos:prefLabel in one language", applies_to=[SKOS], task_types=["labels"],
                              about_classes=[f"{SKOS}#Concept"], provenance={"run": "r1"}))
        proc = m.add(ItemSpec("Procedure", "Walk broader links transitively", "Use for hierarchy questions.",
                              "- use skos:broader+", applies_to=[SKOS + "#"], task_types=["labels"],
                              provenance={"run": "r1"}))
        yield m, anti, proc


def _a1(memory, path, tmp_path, task="How are the labels of ideas checked?") -> list[str]:
    """The ids A1 injects for a labels task over the ontology file."""
    from dspy.utils import DummyLM

    from owl_memory.agent.runner import run

    lm = DummyLM([{"reasoning": "done", "code": "SUBMIT(answer='ok')"}])
    r = run(task, memory, ontology=path, lm=lm, condition="A1",
            trajectory_dir=tmp_path / "runs", task_type="labels")
    return list(r.memory_ids_used)


def test_items_learned_on_skos_serve_a_task_on_its_next_version(shared_data, learned_on_skos, tmp_path):
    from owl_memory.agent.context import schema_card

    memory, anti, proc = learned_on_skos
    path, g = _skos_v2(shared_data, tmp_path, f"<{SKOS2}> owl:priorVersion <{SKOS}> . v2:Idea owl:equivalentClass "
                                              "skos:Concept .")
    assert set(_a1(memory, path, tmp_path)) == {anti, proc}
    own = memory.add(ItemSpec("Procedure", "Zzyzx procedure", "Use when zzyzx.", "- z", applies_to=[SKOS2],
                              task_types=["labels"], provenance={"run": "r2"}))
    injected = _a1(memory, path, tmp_path, "Which preferred label do concepts need?")  # exact first: the carried
    # AntiPattern shares words with the task, the exact item none
    assert injected[0] == own and set(injected) == {own, anti, proc}
    assert "Concepts need one preferred label (carried over)" in schema_card(g, memory).text
    hits = memory.search(about_class=f"{SKOS2}#Idea", context=ontology_context(g))
    assert [(h.id, h.carried_over_from) for h in hits] == [(anti, SKOS)]


def test_an_incompatible_next_version_gets_nothing_carried(shared_data, learned_on_skos, tmp_path):
    from owl_memory.agent.context import schema_card

    memory, *_ = learned_on_skos
    path, g = _skos_v2(shared_data, tmp_path, f"<{SKOS2}> owl:priorVersion <{SKOS}> ; owl:incompatibleWith <{SKOS}> ."
                                              " v2:Idea owl:equivalentClass skos:Concept .")
    assert _a1(memory, path, tmp_path) == []
    assert "preferred label" not in schema_card(g, memory).text


def test_the_memory_search_tool_follows_the_run_ontology_and_filters_by_about_terms(versions):
    from owl_memory.agent.tools import Toolbox

    m, ids = versions
    v2 = _v2(f"<{V2}> owl:priorVersion <{V1}> . v2:Volume owl:equivalentClass v1:Book .")
    tb = Toolbox(m, "p", v2)
    search = {fn.__name__: fn for fn in tb.functions()}["memory_search"]
    found = search(ontology=V2 + "#")["items"]
    assert [(h["id"], h.get("carried_over_from")) for h in found] == [(ids["v2"], None), (ids["book"], V1),
                                                                      (ids["v1"], V1)]
    assert [h["id"] for h in search(about_class=f"{V1}#Book")["items"]] == [ids["book"]]
    unfiltered = search(text="querying", k=10)["items"]  # no ontology given: nothing to follow, nothing marked
    assert {h["id"] for h in unfiltered} == {ids["v1"], ids["v2"], ids["other"]}
    assert not any("carried_over_from" in h for h in unfiltered)


def test_hostile_iris_in_a_run_ontology_are_left_out(versions):
    from rdflib import URIRef
    from rdflib.namespace import OWL

    m, ids = versions
    g = _v2(f"<{V2}> owl:priorVersion <{V1}> .")
    g.add((URIRef(V2), OWL.priorVersion, URIRef('http://x/v1"> } DROP ALL')))
    g.add((URIRef(f"{V2}#Volume"), OWL.equivalentClass, URIRef("http://x/v1#Book\nx")))
    c = ontology_context(g)
    assert c.carried == (V1,) and c.aligned == ()
    assert [h.id for h in m.search(ontology=V2, context=c)] == [ids["v2"], ids["book"], ids["v1"]]


@pytest.mark.parametrize("backend", ["embedded", "oxigraph"])
def test_unusual_but_valid_iris_match_on_every_backend(backend, tmp_path, request):
    """Quotes, parentheses, % escapes and a query string in an IRI are matched as text, never parsed as SPARQL."""
    location = tmp_path / "m" if backend == "embedded" else request.getfixturevalue("server_url")
    onto, cls = "http://x.org/it's/lib?v=1&x=%22(a)", "http://x.org/it's/lib?v=1&x=%22(a)#Book''"
    with Memory(location) as m:
        i = m.add(ItemSpec("Principle", "Odd IRIs", "Use when IRIs are odd.", "x", applies_to=[onto + "#"],
                           about_classes=[cls]))
        for spelling in (onto, onto + "/", onto + "#"):
            assert [h.id for h in m.search(ontology=spelling, about_class=cls)] == [i]
            assert [h.id for h in m.search("odd", ontology=spelling)] == [i]
        assert m.search(ontology=onto + "x") == [] and m.search(about_class=cls + "x") == []


def test_an_export_with_about_terms_stays_one_consistent_dl_ontology(tmp_path, owlcheck):  # noqa: F811
    with Memory(tmp_path / "m") as m:
        m.add(ItemSpec("Principle", "Use ISBN", "Use when matching books.", "x", applies_to=[LIB + "#"],
                       about_classes=CLASSES[:2], about_properties=PROPERTIES))
        path = m.export(tmp_path / "memory.owl", format="xml")
    report = owlcheck(path)
    assert report["violation"] == [] and report["consistent"] == "true"


def test_about_finds_a_term_as_a_class_then_as_a_property(tmp_path):
    mem = str(tmp_path / "m")
    with Memory(mem) as m:
        by_class = m.add(ItemSpec("Principle", "Books have one ISBN", "Use when matching books.", "x",
                                  about_classes=[CLASSES[0]]))
        by_property = m.add(ItemSpec("Principle", "ISBNs are strings", "Use when typing ISBNs.", "y",
                                     about_properties=[PROPERTIES[0]]))
        assert [h.id for h in m.search(about=CLASSES[0])] == [by_class]
        assert [h.id for h in m.search(about=PROPERTIES[0])] == [by_property]
        assert m.search(about="not an iri") == []
    r = CliRunner().invoke(main, ["search", "--about", PROPERTIES[0], "--memory", mem, "--json"])
    assert r.exit_code == 0 and [h["id"] for h in json.loads(r.output)] == [by_property]
    assert CliRunner().invoke(main, ["search", "--about", "a b", "--memory", mem]).exit_code == 2


def test_explain_shows_the_first_search_of_a_followed_or_about_search(versions):
    m, ids = versions
    out = m.explain(about=f"{V1}#Book", context=ontology_context(_v2(f"<{V2}> owl:priorVersion <{V1}> .")))
    assert [h.id for h in out.hits] == [ids["book"]]
    assert out.bindings == {"ontology": V2, "aboutClass": f"{V1}#Book"} and "om:aboutClass ?aboutClass" in out.sparql
