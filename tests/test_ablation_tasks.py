"""LM curriculum tasks inside an ablation (ablation/lm_tasks.py): the record fields a run yields, conflicts and
exception use included, and how the summary adds them up (a scripted DSPy LM, no model)."""

from dspy.utils import DummyLM
from test_loop import query_agent, steps, task

from owl_memory import ItemSpec
from owl_memory.ablation.lm_tasks import make_runner
from owl_memory.ablation.records import Placement, Record
from owl_memory.ablation.summary import summarize
from owl_memory.learning import load_curriculum, shipped_curriculum


def _fields(course, memory, tmp_path, id, lm, learn):
    """One task through the ablation's runner, in condition A2."""
    runner = make_runner(course, {"lm": lm, "condition": "A2", "trajectory_dir": tmp_path})
    return runner(task(course, id), memory, learn)


def test_conflicts_and_exception_use_reach_the_records_and_the_summary(memory, tmp_path):
    """A train run whose Procedure contradicts a stored AntiPattern counts one conflict; a holdout run that reads a
    scoped exception counts one exception used (the general rule it also read does not); the summary sums both."""
    course = load_curriculum(shipped_curriculum())
    bad = _fields(course, memory, tmp_path, "lib-hierarchy-01",
                  DummyLM(query_agent("?x rdfs:subClassOf lib:Work", "', '.join(names[:2])")), learn=True)
    good = _fields(course, memory, tmp_path, "lib-hierarchy-02",
                   DummyLM(query_agent("?x rdfs:subClassOf lib:Organization", "', '.join(names)")), learn=True)
    assert (bad.success, bad.conflicts, good.success, good.conflicts) == (False, 0, True, 1)
    assert len(good.extracted) == 1 and good.exceptions_used == 0

    onto = "http://w3id.org/owl-memory/examples/library"
    rule = memory.add(ItemSpec("Principle", "Always type literals", "Use when writing literals.", "Type them.",
                               applies_to=(onto,), task_types=("hierarchy",)))
    exc = memory.add(ItemSpec("Principle", "Keep labels untyped", "Use for rdfs:label values.", "Labels stay plain.",
                              applies_to=(onto,), task_types=("hierarchy",), scope="exception", refines=rule))
    size = len(memory)
    read = DummyLM(steps(f"a = memory_get({rule!r})\nb = memory_get({exc!r})\nprint(a['title'], b['title'])",
                         "SUBMIT(answer='Book')"))
    hold = _fields(course, memory, tmp_path, "lib-hierarchy-01", read, learn=False)
    assert set(hold.memory_ids_used) == {rule, exc} and hold.exceptions_used == 1
    assert hold.extracted == () and hold.conflicts == 0 and len(memory) == size

    recs = [Record.of(Placement("A2", 0, "train", 1, i, t, "train"), f)
            for i, (t, f) in enumerate((("t1", bad), ("t2", good)))]
    recs.append(Record.of(Placement("A2", 0, "holdout", 1, 2, "h1", "holdout"), hold))
    s = summarize(recs).conditions["A2"]
    assert (s.conflicts, s.exception_use) == (1, 1)
