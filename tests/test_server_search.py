"""A search answers the same on a SPARQL server as embedded: same ids, same order, same scores."""

import random

import pytest

from owl_memory import ItemSpec, Memory
from owl_memory.store.copy import copy_memory

ONTOLOGIES = ["http://www.w3.org/ns/prov#", "http://purl.org/dc/terms/", "http://www.w3.org/2004/02/skos/core#"]
TASKS = ["modelling", "cq-answering", "repair"]
MODES = ["missing-limit", "wrong-datatype"]
KINDS = ["Principle", "Procedure", "AntiPattern", "Constraint"]
WORDS = ["lineage", "query", "bind", "values", "café", "Straße", "limit", "paths", "concepts", "datatype",
         "shape", "repair", "naïve", "graph", "literal", "IRI"]


def generated(m: Memory, n: int = 160, seed: int = 7) -> list[str]:
    """n generated items with repeated words, exceptions, a superseded and an archived share; returns ids."""
    rnd = random.Random(seed)
    specs = []
    for i in range(n):
        words = rnd.choices(WORDS, k=rnd.randint(2, 6))
        specs.append(ItemSpec(rnd.choice(KINDS), " ".join(words[:4]) + f" {i}", "Use when " + " ".join(words) + ".",
                              f"content {i}", applies_to=rnd.sample(ONTOLOGIES, rnd.randint(1, 2)),
                              task_types=rnd.sample(TASKS, rnd.randint(0, 2)),
                              failure_modes=rnd.sample(MODES, rnd.randint(0, 1)),
                              tags=rnd.sample(WORDS, rnd.randint(0, 2)), priority=rnd.randint(0, 3),
                              confidence=rnd.choice([0.3, 0.5, 0.9])))
    ids = m.add_many(specs, validate=False)
    for j in range(0, 40, 8):
        rule = specs[j]
        m.add(ItemSpec(rule.kind, f"exception {j}", "Use when the rule does not hold.", f"exc {j}",
                       applies_to=rule.applies_to, task_types=rule.task_types, failure_modes=rule.failure_modes,
                       scope="exception", refines=ids[j], priority=rnd.randint(0, 3)))
    for j in range(41, 60, 3):
        m.supersede(ids[j], ids[j + 1])
    for j in range(61, 80, 4):
        m.archive(ids[j])
    return ids


def shapes() -> list[dict]:
    """Query shapes: ontology and task-type filters with and without text of 1 to 7 words (coordination levels
    differ from match counts from 4 words on), drawn failure-mode and kind filters and k."""
    rnd, out = random.Random(3), []
    for text in [None, "lineage", "CAFE query", "bind values limit", "naive", "nothing-matches-this", "iri graph",
                 "bind values limit shape", "lineage query graph literal repair paths datatype"]:
        for ontology in [None, ONTOLOGIES[0]]:
            for task in [None, "modelling"]:
                mode = rnd.choice([None, "missing-limit"])
                kinds = rnd.choice([None, ["Principle"], ["antipattern", "procedure"]])
                out.append({"text": text, "ontology": ontology, "task_type": task, "failure_mode": mode,
                            "kinds": kinds, "k": rnd.choice([1, 5, 20])})
    return out


@pytest.fixture(scope="module", params=["oxigraph", pytest.param("virtuoso", marks=pytest.mark.virtuoso)])
def pair(request, tmp_path_factory):
    """The same generated memory embedded and on a server (Oxigraph; Virtuoso when opted in)."""
    from owl_memory_bench.servers import drop_memory_graphs

    url = request.getfixturevalue(request.param).url
    drop_memory_graphs(url)
    with Memory(tmp_path_factory.mktemp("embedded") / "m") as local, Memory(url) as server:
        generated(local)
        copy_memory(local, server)
        yield local, server


@pytest.mark.parametrize("shape", shapes(), ids=lambda s: "-".join(str(v)[:12] for v in s.values() if v))
def test_same_ids_order_and_scores(pair, shape):
    local, server = pair
    want = [(h.id, h.score) for h in local.search(**shape)]
    got = [(h.id, h.score) for h in server.search(**shape)]
    assert got == want


def test_four_words_rank_by_level_not_by_match_count(tmp_path, server_url):
    """Matching 2 of 4 words and matching 1 are the same level ("any"), so BM25 decides: the rare word wins."""
    onto = ONTOLOGIES[0]
    fillers = [ItemSpec("Principle", f"alpha beta filler {i}", "Use when alpha beta.", f"f{i}",
                        applies_to=(ONTOLOGIES[1],)) for i in range(20)]
    two = ItemSpec("Principle", "alpha beta common words here", "Use when alpha and beta appear.", "two",
                   applies_to=(onto,), priority=9)
    rare = ItemSpec("Principle", "delta", "Use when delta.", "rare", applies_to=(onto,))
    for location in (tmp_path / "m", server_url):
        with Memory(location) as m:
            m.add_many([*fillers, two, rare])
            hits = m.search("alpha beta gamma delta", ontology=onto)
            assert [h.id for h in hits] == [rare.id, two.id], location


def test_a_reader_ranks_with_the_statistics_of_another_writers_items(tmp_path, server_url):
    """A reader keeps the corpus statistics while the index version is unchanged: items another writer adds make
    "alpha" common, and the reader's next search ranks with that, as the embedded memory does."""
    first = [ItemSpec("Principle", f"delta filler {i}", "Use when filling.", f"d{i}") for i in range(8)]
    first += [ItemSpec("Principle", f"omega filler {i}", "Use when filling.", f"o{i}") for i in range(10)]
    first += [ItemSpec("Principle", "alpha", "Use when filling.", "a"),
              ItemSpec("Principle", "delta", "Use when filling.", "b")]
    later = [ItemSpec("Principle", f"alpha filler {i}", "Use when filling.", f"a{i}") for i in range(15)]
    with Memory(tmp_path / "m") as local, Memory(server_url) as reader, Memory(server_url) as writer:
        for m in (local, writer):
            m.add_many(first)
        before = [h.id for h in reader.search("alpha delta", k=1)]
        for m in (local, writer):
            m.add_many(later)
        after = [(h.id, h.score) for h in reader.search("alpha delta", k=1)]
        assert before == [first[-2].id] and [i for i, _ in after] == [first[-1].id]
        assert after == [(h.id, h.score) for h in local.search("alpha delta", k=1)]


@pytest.mark.parametrize("shape", shapes(), ids=lambda s: "-".join(str(v)[:12] for v in s.values() if v))
def test_a_search_sends_at_most_two_requests(pair, shape, monkeypatch):
    """Once the corpus cache knows the words and the ontology (a first search), Memory.search sends at most two
    HTTP requests to the server, the ranking (with the memory version) and the cards, counted at the client's
    transport, and answers as the embedded memory does."""
    local, server = pair
    server.search(**shape)
    client, sent = server.backend.client, []
    transport = client._send
    monkeypatch.setattr(client, "_send", lambda *args: sent.append(args[1][:60]) or transport(*args))
    hits = server.search(**shape)
    assert len(sent) <= 2, sent
    assert [(h.id, h.score) for h in hits] == [(h.id, h.score) for h in local.search(**shape)]


def test_a_reader_sees_an_ontology_spelling_another_writer_stores(tmp_path, server_url):
    """The stored spellings of an ontology are cached per memory version: after another writer stores an item under
    a second spelling (a trailing slash), the reader's next search finds both items, as the embedded memory does."""
    first = ItemSpec("Principle", "alpha rule", "Use when alpha.", "a", applies_to=("http://example.org/o#",))
    second = ItemSpec("Principle", "beta rule", "Use when beta.", "b", applies_to=("http://example.org/o/",))
    with Memory(tmp_path / "m") as local, Memory(server_url) as reader, Memory(server_url) as writer:
        for m in (local, writer):
            m.add(first)
        assert [h.id for h in reader.search(ontology="http://example.org/o")] == [first.id]
        for m in (local, writer):
            m.add(second)
        for text in (None, "rule"):
            want = [h.id for h in local.search(text, ontology="http://example.org/o")]
            assert sorted(want) == sorted([first.id, second.id])
            assert [h.id for h in reader.search(text, ontology="http://example.org/o")] == want


def test_generated_memory_ranks_every_query_as_embedded(tmp_path, server_url):
    """On 1,500 generated items (Zipf-like words, as the benchmarks' memories), every text query of the benchmark's
    query set answers with the embedded memory's ids and scores: the prefixes of the impact-ordered postings, the
    items holding all the words and the deeper reads all give the exact ranking."""
    from owl_memory_bench.retrieval.generator import item_specs, query_set

    specs = item_specs(1500)
    queries = [kw for _, kw in query_set(120, "server-test") if "text" in kw]
    words = ("class", "hermit", "query select", "class property domain")
    queries += [{"text": w, "k": k} for w in words for k in (1, 20)]
    with Memory(tmp_path / "m") as local, Memory(server_url) as server:
        for m in (local, server):
            m.add_many(specs, validate=False)
        for kw in queries:
            assert [(h.id, h.score) for h in server.search(**kw)] == [(h.id, h.score) for h in local.search(**kw)], kw


def test_a_server_memory_with_the_earlier_text_index_is_refused(server_url, tmp_path):
    """A memory whose index graph holds postings of the earlier layout (idx:tfN) answers a search with a
    VersionMismatch that says to copy it again, not with nothing found; copying it out still works."""
    from owl_memory.errors import VersionMismatch
    from owl_memory.store.server.client import SparqlClient
    from owl_memory.store.server.layout import GRAPH_INDEX, IDX

    with Memory(server_url) as m:
        m.add(ItemSpec("Principle", "alpha rule", "Use when alpha.", "a"))
    client = SparqlClient(server_url)
    client.update(f"INSERT DATA {{ GRAPH <{GRAPH_INDEX}> {{ <{IDX.tf1}> <{IDX.frequency}> 1 }} }}")
    client.close()
    with Memory(server_url) as m:
        with pytest.raises(VersionMismatch, match="owl-memory copy"):
            m.search("alpha")
        with Memory(tmp_path / "m") as local:
            copy_memory(m, local)
            assert [h.title for h in local.search("alpha")] == ["alpha rule"]
