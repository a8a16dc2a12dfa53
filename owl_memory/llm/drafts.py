"""The LLM extractor: a language model drafts memory items from a bounded outline of one judged run.

What it returns is checked on its parsed form: a draft that is not an object with string kind, title, summary and
content, that an item cannot hold, or whose kind does not fit the run's outcome is rejected with a reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InvalidItem
from ..model import ItemSpec

FIELDS = ("kind", "title", "summary", "content")


@dataclass(frozen=True)
class Draft:
    """One item the model drafted, checked: a kind that fits the run's outcome and well-formed prose.

    Args:
        kind: Procedure or Principle (a successful run), AntiPattern (a failed one).
        title, summary, content: the item's prose.
        failure_mode: the failure an AntiPattern prevents, when the model named one.
    """

    kind: str
    title: str
    summary: str
    content: str
    failure_mode: str = ""


def llm_drafts(task_type: str, outcome: str, outline: str, lm, max_items: int) -> list:
    """The LM's raw drafts for one run (at most 2 * max_items, so rejected ones leave room); InvalidItem when its
    output is not a list."""
    from ..adapters.dspy import dspy

    class ExtractItems(dspy.Signature):
        """Distill at most max_items reusable memory items from one judged agent run over an ontology.

        Items must be general: never copy the task's names, IRIs, literals or answer. A successful run gives
        Procedure or Principle items; a failed run gives AntiPattern items with a failure_mode. Each draft is a
        dict with kind, title (at most 10 words), summary (one sentence: when to use it, when not) and content
        (steps or a checklist)."""

        task_type: str = dspy.InputField()
        outcome: str = dspy.InputField(desc="success or failure, with the judge's reason")
        trajectory_outline: str = dspy.InputField(desc="bounded outline of the run, not the whole trace")
        max_items: int = dspy.InputField()
        drafts: list = dspy.OutputField(desc="a JSON list of item objects")

    with dspy.context(lm=lm):
        pred = dspy.Predict(ExtractItems)(task_type=task_type, outcome=outcome, trajectory_outline=outline,
                                          max_items=max_items)
    if not isinstance(pred.drafts, list):
        raise InvalidItem("the extractor did not return a list of items")
    return pred.drafts[: 2 * max_items]


def parse_draft(d, success: bool) -> Draft:
    """One raw draft as a Draft for a run that succeeded or failed; InvalidItem says what is wrong."""
    if not isinstance(d, dict) or not all(isinstance(d.get(k), str) and d[k].strip() for k in FIELDS):
        raise InvalidItem("a draft item needs string kind, title, summary and content")
    allowed = ("Procedure", "Principle") if success else ("AntiPattern",)
    spec = ItemSpec(d["kind"], d["title"], d["summary"], d["content"])
    if spec.kind not in allowed:
        raise InvalidItem(f"a {'successful' if success else 'failed'} run yields {' or '.join(allowed)}, "
                          f"not {spec.kind}")
    return Draft(spec.kind, spec.title, spec.summary, spec.content, str(d.get("failure_mode") or ""))
