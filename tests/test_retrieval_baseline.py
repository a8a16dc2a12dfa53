"""The retrieval benchmark's rdflib baseline does the work it is compared with: the same ids in the same order as
Memory.search on every query shape, text included (benchmarks/retrieval.py, owl_memory_bench.retrieval)."""

import pytest

from owl_memory import Memory
from owl_memory_bench.retrieval import baselines, generator


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # rdflib's Dataset, on each triple pattern
def test_rdflib_baseline_ranks_every_shape_as_memory_search(tmp_path, fresh_memory):
    """On a generated memory with superseded items, the baseline (the defining SELECT without text, the SPARQL
    server backend's text search on rdflib with text) returns Memory.search's ids, in order, for every shape."""
    specs = generator.item_specs(240)
    with Memory(fresh_memory(tmp_path / "m")) as m:
        m.add_many(specs, validate=False)
        generator.supersede_some(m, specs, 12)
        m.to_graph().serialize(destination=str(tmp_path / "items.nt"), format="nt", encoding="utf-8")
        baseline = baselines.Baseline(baselines.rdflib_dataset(tmp_path / "items.nt", specs))
        queries = generator.query_set(12, "baseline-test")
        found = {shape: 0 for shape in generator.SHAPES}
        for shape, kw in queries:
            mine = [h.id for h in m.search(**kw)]
            assert baseline.search(shape, kw) == mine, (shape, kw)
            found[shape] += bool(mine)
    assert all(found.values()), found  # every shape compared on queries that find something
