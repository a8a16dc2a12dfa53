"""What LM calls sent and used, as owl-memory reads them (adapters.dspy turns dspy's history entries into these)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class LmCall:
    """One call an LM made.

    Args:
        messages: (role, text) of each message sent; a bare prompt is one user message.
        bare_prompt: True for a bare prompt (dspy.RLM's llm_query from the model's code), False for a formatted step.
        prompt_tokens, completion_tokens: what the provider reported (0 when it reported nothing).
        cost_usd: what litellm priced the call at (its local price map); None when it was not priced.
    """

    messages: tuple[tuple[str, str], ...] = ()
    bare_prompt: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None

    @property
    def sent_chars(self) -> int:
        """Characters of the messages sent."""
        return sum(len(text) for _, text in self.messages)


@dataclass(frozen=True)
class LmUsage:
    """What some LM calls used: how many, their prompt and completion tokens, what they cost in US dollars (None when
    a call that used tokens was not priced; a call that used none, a scripted LM's, costs 0) and the characters sent.
    """

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0
    sent_chars: int = 0

    @classmethod
    def of(cls, calls: Iterable[LmCall]) -> LmUsage:
        """The usage of `calls` together."""
        calls = list(calls)
        unpriced = any(c.cost_usd is None and c.prompt_tokens + c.completion_tokens for c in calls)
        cost = None if unpriced else round(sum(c.cost_usd or 0.0 for c in calls), 6)
        return cls(len(calls), sum(c.prompt_tokens for c in calls), sum(c.completion_tokens for c in calls), cost,
                   sum(c.sent_chars for c in calls))
