"""One strict-RLM run over the capped owl-memory tools, with a graph as the ontology: the LM calls it made, and its
tokens and leakage measured as `owl-memory run` measures them (agent/leakage.py on the run's own LM calls), summed
over every run of a proposer."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

from rdflib import Graph

from ..agent import run_metrics, summed
from ..model import RunMetrics

if TYPE_CHECKING:
    from ..store import Memory


class ToolRun:
    """Runs a dspy.RLM signature over the capped tools for a proposer; `metrics` sums what its runs cost and leaked.

    Args:
        lm: a dspy.LM (or any DSPy-compatible LM, e.g. dspy.utils.DummyLM in tests).
        max_iters: RLM iterations per run.
        max_llm_calls: LM calls per run.
    """

    def __init__(self, lm, max_iters: int = 8, max_llm_calls: int = 12):
        """Hold the LM and the budgets; no call made yet."""
        self.lm, self.max_iters, self.max_llm_calls = lm, max_iters, max_llm_calls
        self.metrics = RunMetrics()

    @property
    def calls(self) -> int:
        """LM calls made so far."""
        return self.metrics.lm_calls

    def __call__(self, signature: str, instructions: str, graph: Graph, memory: Memory | None, **inputs):
        """One dspy.RLM run (the graph as the ontology, `memory` for memory tools); adds its LM calls, tokens and
        leakage to self.metrics, also when the run fails."""
        from ..adapters.dspy import calls_before, calls_since, dspy
        from ..agent import RLM, Toolbox, interpreter_factory

        box = Toolbox(memory, ontology=graph)
        rlm = RLM(dspy.Signature(signature, instructions), max_iters=self.max_iters,
                  max_llm_calls=self.max_llm_calls, tools=box.functions(), interpreter_factory=interpreter_factory())
        before, start, pred = calls_before(self.lm), time.monotonic(), None
        try:
            with dspy.context(lm=self.lm, disable_history=False):
                pred = rlm(**inputs)
            return pred
        finally:
            iterations = len(pred.trajectory) if pred is not None else 0
            given = [json.dumps(inputs, ensure_ascii=False, default=str)]
            run = run_metrics(box, calls_since(self.lm, before), given, iterations, time.monotonic() - start)
            self.metrics = summed(self.metrics, run)


class ToolRunProposer:
    """A proposer whose every model call is one ToolRun (`self.run`): what it costs is counted there."""

    source = "llm"
    run: ToolRun

    @property
    def calls(self) -> int:
        """LM calls made so far."""
        return self.run.calls

    @property
    def metrics(self) -> RunMetrics:
        """What its runs cost and leaked so far (LM calls, tokens, payload characters in the history)."""
        return self.run.metrics
