"""Retrieval defined in SPARQL: the defining SELECT on rdflib over an export gives the same ids in the same order
as the embedded FTS5 accelerator, for every query shape without text, on a generated memory."""

import itertools
import json
import random

import pytest
from click.testing import CliRunner
from rdflib import Graph

from owl_memory import ItemSpec, Memory
from owl_memory.cli import main
from owl_memory.store import retrieval
from owl_memory.store.embedded import postings
from owl_memory.vocab import KINDS

ONTOLOGIES = [f"http://example.org/onto{n}#" for n in range(4)]
TASKS = ["mapping", "cq answering", "repair"]
FAILURES = ["missing limit", "wrong datatype"]


def generated(seed: int = 7) -> list[list[ItemSpec]]:
    """Three batches: 200 rules, 60 exceptions of them, 15 exceptions of exceptions (ties on purpose)."""
    rng = random.Random(seed)

    def item(n: int, scope="general", refines=None) -> ItemSpec:
        return ItemSpec(rng.choice(KINDS[:5]), f"Generated item {n}", "Use when testing retrieval.", f"body {n}",
                        applies_to=rng.sample(ONTOLOGIES, rng.randint(1, 2)), task_types=rng.sample(TASKS, 1),
                        failure_modes=rng.sample(FAILURES, rng.randint(0, 1)), priority=rng.randint(0, 3),
                        confidence=rng.choice([0.2, 0.5, 0.5, 0.9]), scope=scope, refines=refines)

    rules = [item(n) for n in range(200)]
    exceptions = [item(1000 + n, "exception", rng.choice(rules).id) for n in range(60)]
    nested = [item(2000 + n, "exception", rng.choice(exceptions).id) for n in range(15)]
    return [rules, exceptions, nested]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A generated memory with supersessions and archived items, and its validated Turtle export."""
    path = tmp_path_factory.mktemp("retrieval")
    rng = random.Random(11)
    with Memory(path / "m") as m:
        batches = generated()
        for batch in batches:
            m.add_many(batch, validate=False)  # export() below validates the whole memory
        ids = [s.id for batch in batches for s in batch]
        for old, new in zip(rng.sample(ids, 30), rng.sample(ids, 30), strict=True):
            if old != new:
                m.supersede(old, new)
        for i in rng.sample(ids, 25):
            m.archive(i)
        m.export(path / "export.ttl")
    g = Graph()
    g.parse(path / "export.ttl", format="turtle")
    return path / "m", g


def shapes():
    """Every query shape without text: each combination of filters with kinds none / one / two, k 3 or 50."""
    filters = {"ontology": ONTOLOGIES[1], "task_type": "cq answering", "failure_mode": "missing limit"}
    ks = itertools.cycle((3, 50))
    for r in range(4):
        for names in itertools.combinations(filters, r):
            for kinds in (None, ["Principle"], ["procedure", "AntiPattern"]):
                yield {**{n: filters[n] for n in names}, "kinds": kinds, "k": next(ks)}


def test_defining_sparql_and_fts5_agree_on_every_shape_without_text(built):
    path, exported = built
    checked = 0
    with Memory(path) as m:
        for kw in shapes():
            fast = [h.id for h in m.search(**kw)]
            q = retrieval.search_query(**kw)
            assert fast == retrieval.run_defining(exported, q), kw
            checked += bool(fast)
    assert checked >= 20  # most of the 24 shapes return something: the comparison is not vacuous


@pytest.mark.slow
def test_a_memory_made_before_the_accelerator_tables_gets_them_on_open_and_read_only_ones_search_the_same(built):
    """The order and postings tables (store format 2) are built when an older memory is opened for writing; a
    read-only older memory searches through FTS5 alone: the same ids in the same order either way."""
    import shutil
    import sqlite3
    import tempfile
    from pathlib import Path

    from test_damage import _as_reader

    path, exported = built
    root = Path(tempfile.mkdtemp())
    try:
        root.chmod(0o755)
        old, locked = root / "old", root / "locked"
        shutil.copytree(path, old)
        with sqlite3.connect(old / "memory.sqlite3") as db:
            for table in postings.TABLES:
                db.execute(f"DROP TABLE {table}")
            db.execute("CREATE TABLE om_terms (term TEXT)")  # a table of format 3 that format 4 retired
            db.execute("PRAGMA user_version = 1")
        shutil.copytree(old, locked)
        for f in locked.iterdir():
            f.chmod(0o444)
        locked.chmod(0o555)

        texts = [{"text": t, "k": 20, **kw} for t in ("generated item 17", "testing", "item when")
                 for kw in ({}, {"ontology": ONTOLOGIES[1]}, {"kinds": ["Principle"]})]

        def searches(memory_path):
            """Whether the memory walks the accelerator tables, and the ids of every shape's search."""
            with Memory(memory_path) as m:
                return [m.backend.index.ordered, [[h.id for h in m.search(**kw)] for kw in [*shapes(), *texts]]]

        with Memory(path) as m:
            want = [*(retrieval.run_defining(exported, retrieval.search_query(**kw)) for kw in shapes()),
                    *([h.id for h in m.search(**kw)] for kw in texts)]
        assert _as_reader(searches, locked) == [False, want]
        assert searches(old) == [True, want]
        with sqlite3.connect(old / "memory.sqlite3") as db:
            assert not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'om_terms'").fetchall()
        assert any(len(ids) >= 10 for ids in want[-len(texts):])  # the text searches compare real rankings
    finally:
        for d in root.rglob("*"):
            if d.is_dir():
                d.chmod(0o755)
        shutil.rmtree(root)


def test_a_format_4_memory_gets_the_delta_tables_on_open_and_searches_the_same(built):
    """Store format 5 only adds the item sets' delta tables: a format-4 memory opened for writing gets them (nothing
    rebuilt), then adds and text searches rank exactly as on a memory made at format 5."""
    import shutil
    import sqlite3
    import tempfile
    from pathlib import Path

    from test_retrieval_index import zipf_specs

    from owl_memory.store.embedded.world import FORMAT

    path, _ = built
    root = Path(tempfile.mkdtemp())
    try:
        shutil.copytree(path, root / "old")
        shutil.copytree(path, root / "new")
        with sqlite3.connect(root / "old" / "memory.sqlite3") as db:
            for table in postings.SETS:
                postings.fold(db, table)  # the sets as format 4 kept them: every change in place
                db.execute(f"DROP TABLE {table}_delta")
            db.execute("PRAGMA user_version = 4")
        more = zipf_specs(40, 3)
        texts = [{"text": t, "k": 20} for t in ("generated item 17", "class shape rollback", "testing")]

        def after_adds(memory_path):
            """The format and each text search's ids after adding the same items."""
            with Memory(memory_path) as m:
                m.add_many(more, validate=False)
                version = m.backend.db.execute("PRAGMA user_version").fetchone()[0]
                return version, [[h.id for h in m.search(**kw)] for kw in texts]

        old, new = after_adds(root / "old"), after_adds(root / "new")
        assert old == new and old[0] == FORMAT == 6 and all(old[1])
    finally:
        shutil.rmtree(root)


APPLICABILITY = ("applies_to", "task_types", "failure_modes")


def test_exceptions_win_exactly_when_their_narrower_applicability_holds(built):
    """An exception comes before its rule exactly when every applicability value it adds to the rule's is on a
    property the query states (else just after the rule), for queries stating none, some and all filters."""
    path, exported = built
    with Memory(path) as m:
        placed = {True: 0, False: 0}
        for stated, kw in (((), {}), (("task_types",), {"task_type": "cq answering"}),
                           (("applies_to", "task_types"), {"ontology": ONTOLOGIES[1], "task_type": "mapping"}),
                           (APPLICABILITY, {"ontology": ONTOLOGIES[0], "task_type": "repair",
                                            "failure_mode": "wrong datatype"})):
            ids = [h.id for h in m.search(k=50, **kw)]
            for pos, i in enumerate(ids):
                item = m.get(i)
                assert not item.archived
                rule = item.refines[0] if item.refines else None
                if item.scope == "exception" and rule in ids:
                    base = m.get(rule)
                    wins = all(f in stated or set(getattr(item, f)) <= set(getattr(base, f)) for f in APPLICABILITY)
                    assert (pos < ids.index(rule)) == wins, (i, rule, kw)
                    placed[wins] += 1
            superseded = {str(o).rsplit("/", 1)[-1] for o in exported.objects(None, retrieval.OM.supersedes)}
            assert not superseded & set(ids)
        assert placed[False] >= 3  # exceptions held below their rules occur (winning ones: the test below)


def conflict(m) -> tuple[str, str]:
    """A rule for one failure mode and an exception of it for a narrower one (benchmarks/memory_cases.py's case)."""
    rule = m.add(ItemSpec("Principle", "Always type literals", "Use when writing literals.", "a",
                          applies_to=[ONTOLOGIES[0]], task_types=["mapping"], failure_modes=["wrong datatype"]))
    exc = m.add(ItemSpec("Principle", "Keep untyped literals for labels", "Use when writing labels.", "b",
                         applies_to=[ONTOLOGIES[0]], task_types=["mapping"], failure_modes=["missing limit"],
                         priority=3, scope="exception", refines=rule))
    return rule, exc


def test_exception_wins_only_when_its_failure_mode_is_stated(tmp_path, oxigraph):
    """Both backends, with and without text: the rule leads unless the query states the exception's failure mode."""
    from owl_memory_bench.servers import clear

    clear(oxigraph.url)
    with Memory(tmp_path / "m") as local, Memory(oxigraph.url) as server:
        for m in (local, server):
            rule, exc = conflict(m)
            for text in (None, "literals"):
                for mode, first in (("missing limit", exc), ("wrong datatype", rule), (None, rule)):
                    ids = [h.id for h in m.search(text, ontology=ONTOLOGIES[0], task_type="mapping",
                                                     failure_mode=mode, k=5)]
                    assert ids[0] == first, (m, text, mode)
                ids = [h.id for h in m.search(text, k=5)]
                assert ids == [rule, exc], (m, text)  # unstated: the exception comes just after its rule


def test_explain_shows_the_defining_query_and_its_bindings(built):
    path, exported = built
    with Memory(path) as m:
        out = m.explain(ontology=ONTOLOGIES[0], task_type="mapping", kinds=["Principle"], k=5)
        assert out.engine == "fts5" and "SELECT ?item" in out.sparql
        assert out.bindings == {"ontology": ONTOLOGIES[0], "taskType": "http://w3id.org/owl-memory/task-type/mapping"}
        assert ONTOLOGIES[0] not in out.sparql  # bound, never pasted into the text
        rows = exported.query(out.sparql, initBindings=retrieval.bindings(
            retrieval.search_query(ontology=ONTOLOGIES[0], task_type="mapping", kinds=["Principle"], k=5)))
        assert [h.id for h in out.hits] == [str(r[0]).rsplit("/", 1)[-1] for r in rows]


def test_cli_search_explain_prints_the_query(built):
    path, _ = built
    result = CliRunner().invoke(main, ["search", "--ontology", ONTOLOGIES[2], "--explain", "--json",
                                       "--memory", str(path)])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert "SELECT ?item" in out["sparql"] and out["bindings"] == {"ontology": ONTOLOGIES[2]}
    text = CliRunner().invoke(main, ["search", "--ontology", ONTOLOGIES[2], "--explain", "--memory", str(path)])
    assert text.exit_code == 0 and "ORDER BY DESC(?groupPriority)" in text.output


def test_server_backend_runs_the_same_definition(tmp_path, oxigraph):
    """A high-priority exception of a low-priority rule: it shows just above its rule, on both backends."""
    from owl_memory.store.copy import copy_memory
    from owl_memory_bench.servers import clear

    clear(oxigraph.url)
    with Memory(tmp_path / "m") as local, Memory(oxigraph.url) as server:
        low = local.add(ItemSpec("Principle", "Low rule", "Use when testing.", "a", applies_to=[ONTOLOGIES[0]]))
        local.add(ItemSpec("Principle", "Middle item", "Use when testing.", "b", applies_to=[ONTOLOGIES[0]],
                           priority=5))
        local.add(ItemSpec("Principle", "High exception", "Use when testing.", "c", applies_to=[ONTOLOGIES[0]],
                           priority=9, scope="exception", refines=low))
        copy_memory(local, server)
        for kw in ({"k": 1}, {"k": 3}, {"ontology": ONTOLOGIES[0], "k": 2}, {"kinds": ["Principle"], "k": 3}):
            want = [h.id for h in local.search(**kw)]
            assert [h.id for h in server.search(**kw)] == want, kw
        assert [h.title for h in local.search(k=3)] == ["Middle item", "High exception", "Low rule"]
        assert server.explain(k=1).engine == "sparql"
