"""`--lm scripted`: a fixed two-step stand-in for a model, so `run`, `train` and `ablate` work from a fresh clone.

It is not a model and solves nothing: every run makes the same two steps, (1) search memory by the task's ontology
when the condition has memory tools (A0 and A1 have none) and print the titles found, and on a run granted SPARQL
endpoints list them and their named graphs (from the endpoint's profile when memory keeps one), (2) answer "unknown". A
gold-judged task therefore fails, and the learning loop still does all of its work on it: judge, extract an
AntiPattern, consolidate (a later failure of the same task type is an exact duplicate of the stored item), record
provenance and the items a run used.
Figures from it measure the pipeline and its costs, never what memory is worth.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..adapters.dspy import dspy

SCRIPTED = "scripted"
STEP_ONE = """# scripted step one: what memory holds for this ontology (A0 and A1 have no memory tools)
try:
    found = memory_search(ontology=(ontology.get('ontology') or [''])[0], k=3)['items']
except NameError:
    found = []
print(len(found), [item['title'] for item in found])
try:
    for e in endpoint_list()['endpoints'][:2]:
        known = (e['profile'] or {}).get('graphs')
        print(e['url'], known or endpoint_graphs(e['url'], 5))
except NameError:
    pass"""
STEP_TWO = "SUBMIT(answer='unknown')  # a scripted stand-in answers nothing"


def scripted_lm() -> dspy.utils.DummyLM:
    """A DSPy LM replaying the two steps: step two once step one is in the run's history, else step one."""
    from ..adapters.dspy import dspy

    return dspy.utils.DummyLM({"# scripted step one": {"reasoning": "Answer.", "code": STEP_TWO},
                    "": {"reasoning": "Look in memory.", "code": STEP_ONE}})
