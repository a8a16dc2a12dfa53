"""One strict-RLM run over the capped owl-memory tools, with a graph as the ontology: the LM calls it made, and its
tokens and leakage measured as `owl-memory run` measures them (agent/leakage.py on the run's own LM calls), summed
over every run of a proposer."""

from __future__ import annotations

import json
import time
from dataclasses import fields

from rdflib import Graph

from ..agent.leakage import measure
from ..model import RunMetrics


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

    def __call__(self, signature: str, instructions: str, graph: Graph, memory, **inputs):
        """One dspy.RLM run (the graph as the ontology, `memory` for memory tools); adds its LM calls, tokens and
        leakage to self.metrics, also when the run fails."""
        from ..adapters.dspy import dspy
        from ..agent.runner import RLM, _new_calls, _seen, interpreter_factory
        from ..agent.tools import Toolbox

        box = Toolbox(memory, ontology=graph)
        rlm = RLM(dspy.Signature(signature, instructions), max_iters=self.max_iters,
                  max_llm_calls=self.max_llm_calls, tools=box.functions(), interpreter_factory=interpreter_factory())
        before, start, pred = _seen(self.lm), time.monotonic(), None
        try:
            with dspy.context(lm=self.lm, disable_history=False):
                pred = rlm(**inputs)
            return pred
        finally:
            iterations = len(pred.trajectory) if pred is not None else 0
            run = measured(box, _new_calls(self.lm, before), inputs, iterations, time.monotonic() - start)
            self.metrics = summed(self.metrics, run)


def measured(box, calls: list[dict], inputs: dict, iterations: int, seconds: float) -> RunMetrics:
    """One run's metrics: LM calls and tokens, payload characters (every handle the tools handed out) found in the
    LM's messages beyond the inputs and the vocabulary the tools showed, and the toolbox's counters."""
    from ..agent.runner import _counts

    payloads = [(ref.kind, box.load(ref)) for ref in box.payloads]
    given = [json.dumps(inputs, ensure_ascii=False, default=str), *sorted(box.vocabulary)]
    stats = box.stats
    return RunMetrics(**_counts(calls, iterations), **measure(calls, payloads, allowed=given),
                      large_returns=stats["large_returns"], max_window=stats["max_window"],
                      max_return=stats["max_return"], tool_calls=stats["tool_calls"], tool_errors=stats["tool_errors"],
                      read_chars=box.budget.spent, seconds=round(seconds, 3))


def summed(a: RunMetrics, b: RunMetrics) -> RunMetrics:
    """Two runs' metrics as one: counts and characters added (per payload kind too), largest values kept."""
    out = {}
    for f in fields(RunMetrics):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, dict):
            out[f.name] = {k: x.get(k, 0) + y.get(k, 0) for k in sorted({*x, *y})}
        else:
            out[f.name] = max(x, y) if f.name.startswith("max_") else round(x + y, 3)
    return RunMetrics(**out)
