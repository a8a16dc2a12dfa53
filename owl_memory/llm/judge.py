"""The LLM judge: a language model decides whether a run succeeded when there is no gold to judge it against."""

from __future__ import annotations

from ..model.judgments import CONFIDENCES, Judgment

TASK_CHARS, ANSWER_CHARS, EVIDENCE_CHARS, REASON_CHARS = 2_000, 2_000, 4_000, 500


def judge_llm(task: str, answer: str, evidence: str, lm) -> Judgment:
    """An LM decides success from the task, the answer and bounded evidence; low confidence when it is unsure."""
    from ..adapters.dspy import dspy

    class JudgeRun(dspy.Signature):
        """Decide whether the answer achieves the task. Success needs support in the evidence, not plausibility."""

        task: str = dspy.InputField()
        answer: str = dspy.InputField()
        evidence: str = dspy.InputField(desc="bounded excerpts of the run, not the whole trace")
        success: bool = dspy.OutputField()
        reason: str = dspy.OutputField(desc="one or two sentences")
        confidence: str = dspy.OutputField(desc="high, medium or low")

    with dspy.context(lm=lm):
        pred = dspy.Predict(JudgeRun)(task=task[:TASK_CHARS], answer=answer[:ANSWER_CHARS],
                                      evidence=evidence[:EVIDENCE_CHARS])
    confidence = str(pred.confidence).strip().lower()
    ok = bool(pred.success)
    return Judgment(ok, str(pred.reason)[:REASON_CHARS], confidence if confidence in CONFIDENCES else "low", "llm", (),
                    "" if ok else "judged-wrong")
