"""`sprint --agent --lm scripted`: a fixed stand-in for a construction model, so the agentic sprint runs from a clone.

It is not a model and invents nothing: in one step it applies, for each failing competency question, the compiled
answer memory holds for it (repair_candidates on the CQ's signature), then verifies and repairs with the candidates
offered (compiled operators first, then the library), undoing a repair that did not clear its violation, and
submits. On a memory that never saw the sprint no CQ gets an answer, so the sprint fails (exit 1); after a symbolic
`owl-memory sprint` over the same memory, it rebuilds the ontology from what that sprint compiled.
"""

from __future__ import annotations

FROM_MEMORY = """# scripted construction agent: replay what memory holds, repair with what is offered, invent nothing
for cq in cq_status()['cqs']:
    found = repair_candidates(cq['signature']) if not cq['passed'] else {}
    for candidate in (found.get('candidates', []) if isinstance(found, dict) else [])[:1]:
        print(cq['id'], repair_apply(candidate['id']))
"""
REPAIR = """for round in range(8):
    check = workspace_verify()
    if not isinstance(check, dict) or check['conforms']:
        break
    for signature in check['signatures']:
        found = repair_candidates(signature)
        for candidate in (found['candidates'] if isinstance(found, dict) else []):
            outcome = repair_apply(candidate['id'])
            if isinstance(outcome, dict) and outcome['verified']:
                break
            if isinstance(outcome, dict) and outcome['delta']:
                workspace_undo(outcome['delta'])
"""  # verify, then for each signature apply the first candidate that clears it (undoing those that do not)
SCRIPT = FROM_MEMORY + REPAIR + """status, done = cq_status(), isinstance(check, dict) and check['conforms']
SUBMIT(answer=f"{status['passed']}/{status['total']} CQs pass; conforms: {done}")
"""


def construction_lm():
    """A DSPy LM that answers every step with SCRIPT (its one step ends with SUBMIT)."""
    from ..adapters.dspy import dspy

    return dspy.utils.DummyLM({"": {"reasoning": "Replay compiled answers, then verify and repair.", "code": SCRIPT}})
