"""One strict-RLM run over the capped owl-memory tools, with a graph as the ontology, counting the LM calls it made."""

from __future__ import annotations

from rdflib import Graph


class ToolRun:
    """Runs a dspy.RLM signature over the capped tools for a proposer, and counts its LM calls.

    Args:
        lm: a dspy.LM (or any DSPy-compatible LM, e.g. dspy.utils.DummyLM in tests).
        max_iters: RLM iterations per run.
        max_llm_calls: LM calls per run.
    """

    def __init__(self, lm, max_iters: int = 8, max_llm_calls: int = 12):
        """Hold the LM and the budgets; no call made yet."""
        self.lm, self.max_iters, self.max_llm_calls = lm, max_iters, max_llm_calls
        self.calls = 0

    def __call__(self, signature: str, instructions: str, graph: Graph, memory, **inputs):
        """One dspy.RLM run (the graph as the ontology, `memory` for memory tools); adds its LM calls to self.calls."""
        import dspy

        from ..agent.runner import RLM, interpreter_factory
        from ..agent.tools import tools

        sig = dspy.Signature(signature, instructions)
        rlm = RLM(sig, max_iters=self.max_iters, max_llm_calls=self.max_llm_calls,
                  tools=tools(memory, ontology=graph), interpreter_factory=interpreter_factory())
        before = {id(e) for e in self._history()}
        try:
            with dspy.context(lm=self.lm, disable_history=False):
                return rlm(**inputs)
        finally:
            self.calls += len([e for e in self._history() if id(e) not in before])

    def _history(self) -> list:
        """The LM's call history (empty for an LM that keeps none)."""
        return getattr(self.lm, "history", None) or []
