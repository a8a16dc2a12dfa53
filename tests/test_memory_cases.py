"""The memory-specific case suite (benchmarks/memory_cases.py) at small sizes: each family yields its figure."""

import pytest

from owl_memory_bench import memory_cases as cases


@pytest.fixture(scope="module")
def rows():
    """One small run of every case family."""
    return {r["case"] + str(r.get("near_misses", r.get("distractor_writes", ""))): r
            for r in cases.run_cases(sizes=[10], delays=[200], traps=[])}


def test_over_retrieval_and_delayed_recall(rows):
    """The right item ranks first among 10 near-misses (one right item: precision@5 is 1/5 when it is in the top 5);
    a constraint is recalled after 200 distractor writes."""
    assert rows["over-retrieval10"]["p@1"] == 1.0 and rows["over-retrieval10"]["p@5"] == 0.2
    assert rows["over-retrieval10"]["hit@5"] == 1.0
    assert rows["delayed-recall200"]["recall@5"] == 1.0


def test_conflicts_follow_applicability(rows):
    """With the exception's failure mode the exception wins; with the rule's, or none stated, the rule wins."""
    by = rows["conflicting-rules"]["by_query"]
    assert by["label-language"] == 1.0 and by["datatype"] == 1.0 and by["unstated"] == 1.0


def test_ontology_shift_needs_links(rows):
    """Items keyed to v1 are invisible under v2 unless the version/equivalence links are followed (by the library,
    marked carried over); an incompatible v2 receives none."""
    r = rows["ontology-shift"]
    assert r["recall@5_without_links"] == 0.0 and r["recall@5_following_links"] == 1.0
    assert r["carried_marked"] == 1.0 and r["carried_when_incompatible"] == 0


@pytest.mark.parametrize("condition", ["A2", "A3"])
def test_grep_adversary_gets_no_bait_out_of_capped_tools(tmp_path, condition):
    """A2, A3: every tool called with its default reads, everything containing a bait printed and returned: nothing."""
    row = cases.leakage_trap(tmp_path, "grep", condition)
    assert row["by_source"] == {"prompt": 0, "ontology": 0, "memory": 0} and row["baits_returned"] == 0
    assert row["tool_calls"] == 7 and row["tool_errors"] == 0  # every tool it tried answered
    assert row["items_injected"] == (1 if condition == "A3" else 0)  # A3's hint came from the baited item


def test_grep_adversary_gets_every_bait_out_of_the_negative_control(tmp_path):
    """A4: the same script, uncapped tools and the prompt text in the inputs: all three baits, whole."""
    row = cases.leakage_trap(tmp_path, "grep", "A4")
    assert row["by_source"] == {source: len(bait) for source, bait in cases.BAITS.items()}
    assert row["baits_returned"] == 3


def test_hunter_paging_windows_to_the_bait_is_measured(tmp_path):
    """A2: an agent that pages windows straight to each bait gets it through, and every character is counted."""
    row = cases.leakage_trap(tmp_path, "hunter", "A2")
    assert row["by_source"]["prompt"] == len(cases.BAITS["prompt"]) and row["baits_returned"] == 1
    assert 0 < row["by_source"]["memory"] <= len(cases.BAITS["memory"])
