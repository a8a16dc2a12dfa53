"""Every family of a generated curriculum can learn: on an ontology no other test uses (PAV), one task of each family
answered right stores a Procedure and answered wrong an AntiPattern; the extractor's own templates (the family's
name, the predicates its pattern keeps) never count as text copied from the task."""

import pytest
from dspy.utils import DummyLM

from owl_memory import Memory, run
from owl_memory.learning.curriculum_make import make_curriculum
from owl_memory.learning.generated import MakeOptions

pytestmark = pytest.mark.shared_data


def agent(gold: str, answer: str) -> list[dict]:
    """A scripted agent that runs the gold over the ontology, then submits `answer`."""
    return [{"reasoning": "query", "code": f"```python\nr = ontology_query({gold!r})\n"
                                           f"rows = results_peek(r['handle'], 50)['rows']\nprint(len(rows))\n```"},
            {"reasoning": "submit", "code": f"```python\nSUBMIT(answer={answer!r})\n```"}]


@pytest.fixture(scope="module")
def pav(shared_data):
    """A curriculum made from PAV with a few tasks of every family PAV has, and the ontology file."""
    onto = shared_data / "ontologies" / "pav.rdf"
    return make_curriculum([onto], MakeOptions(tasks=120, seed=3)), onto


def test_every_family_stores_an_item_right_and_wrong(pav, fresh_memory, tmp_path):
    made, onto = pav
    firsts = {}
    for t in made.tasks:
        firsts.setdefault(t.family, t)
    assert len(firsts) >= 10  # PAV has tasks in most families
    silent = []
    for family, t in sorted(firsts.items()):
        for right in (True, False):
            with Memory(fresh_memory(tmp_path / f"{family}-{right}")) as memory:
                answer = t.answer_text() if right else "I could not find it."
                r = run(t.question, memory=memory, ontology=onto, lm=DummyLM(agent(t.gold, answer)), learn=True,
                        expect={"sparql": t.gold}, task_type=t.family, task_id=t.id, trajectory_dir=tmp_path)
                assert r.judgment.success is right, (family, r.judgment.reason)
                if not r.extracted:
                    silent.append((family, right, r.consolidation.rejected))
    assert not silent, silent
