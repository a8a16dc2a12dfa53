"""What an ablation would cost with a real model, estimated from a dry run with the scripted stand-in.

The dry run (`--lm scripted`) sends the real prompts: every RLM step carries the instructions, the task (with A1's
text or A3's hint), the context layers and the REPL history so far; it measures their characters (`prompt_chars`).
A model makes more steps than the stand-in's two, each one resending the prompt plus the history grown by one
iteration (the model's code and the REPL output it saw, at most `max_output_chars`). So, per run of n iterations,
with P the first step's prompt tokens and G the growth per iteration:

    prompt tokens ≈ (n + 1) * P + G * n * (n + 1) / 2      (n steps, then at most one extraction step)
    completion tokens ≈ (n + 1) * C

Typical: n = max_iters / 2, G = (CODE_CHARS + TYPICAL_OUTPUT) / CHARS_PER_TOKEN, C = TYPICAL_COMPLETION. Worst:
n = max_iters, G = (CODE_CHARS + max_output_chars) / CHARS_PER_TOKEN, C = max_tokens (or WORST_COMPLETION). Tokens
are characters / CHARS_PER_TOKEN (English prose tokenizes near 4; IRIs and code worse, so real counts run higher).
Money is litellm's local price map (no network). The model's own llm_query calls (sub-LM) are not included: their
prompts are whatever the model writes, bounded only by --max-llm-calls and --max-tokens.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..model import RunConfig
from .summary import Summary

CHARS_PER_TOKEN = 4
CODE_CHARS = 600  # characters of reasoning and code a model writes per step (the history keeps them)
TYPICAL_OUTPUT, MAX_OUTPUT = 1_000, RunConfig.max_output_chars  # REPL output per iteration: typical, the runner's cap
TYPICAL_COMPLETION, WORST_COMPLETION = 300, 2_000  # completion tokens per call (worst when --max-tokens is not set)


@dataclass(frozen=True)
class Estimate:
    """An ablation's estimated cost with one model.

    Args:
        model: the model priced; priced: whether litellm's price map has it.
        runs: task runs the ablation makes; first_prompt_tokens: the first step's prompt, mean over runs.
        typical_iterations, worst_iterations: iterations per run assumed.
        typical_tokens, worst_tokens: (prompt, completion) tokens per run.
        typical_usd, worst_usd: money for the whole ablation (None when the model is not priced).
    """

    model: str
    priced: bool
    runs: int
    first_prompt_tokens: int
    typical_iterations: int
    worst_iterations: int
    typical_tokens: tuple[int, int]
    worst_tokens: tuple[int, int]
    typical_usd: float | None
    worst_usd: float | None

    def to_dict(self) -> dict:
        """JSON form."""
        return asdict(self)

    def lines(self) -> list[str]:
        """The estimate for people."""
        money = (f"${self.typical_usd:,.2f} typical, at most ${self.worst_usd:,.2f}" if self.priced else
                 "not priced: the model is not in litellm's local price map")
        return [f"estimate for {self.model}: {self.runs} runs; first step ≈ {self.first_prompt_tokens:,} prompt "
                f"tokens; per run ≈ {self.typical_tokens[0]:,} prompt + {self.typical_tokens[1]:,} completion "
                f"tokens typical ({self.typical_iterations} iterations), at most {self.worst_tokens[0]:,} + "
                f"{self.worst_tokens[1]:,} ({self.worst_iterations} iterations)",
                f"cost of the whole ablation: {money} (llm_query sub-calls not included)"]


def run_tokens(first: float, iterations: int, growth: float, completion: float) -> tuple[int, int]:
    """(prompt, completion) tokens of one run of `iterations` steps plus one extraction step."""
    steps = iterations + 1
    return int(steps * first + growth * iterations * steps / 2), int(steps * completion)


def estimate(summary: Summary, model: str, max_tokens: int | None = None) -> Estimate:
    """The cost of running `summary`'s ablation with `model`, from its dry run's prompt sizes and budgets."""
    conds = list(summary.conditions.values())
    runs = sum(c.runs for c in conds)
    first = sum(c.runs * c.prompt_chars_per_task / max(1.0, c.lm_calls_per_task) for c in conds) / max(1, runs)
    first /= CHARS_PER_TOKEN
    max_iters = int(summary.settings.get("max_iters") or 12)
    typical_n = max(1, max_iters // 2)
    typical = run_tokens(first, typical_n, (CODE_CHARS + TYPICAL_OUTPUT) / CHARS_PER_TOKEN, TYPICAL_COMPLETION)
    worst = run_tokens(first, max_iters, (CODE_CHARS + MAX_OUTPUT) / CHARS_PER_TOKEN, max_tokens or WORST_COMPLETION)
    from ..adapters.dspy import price  # litellm's price map: loads dspy and litellm, paid by estimates only

    prices = price(model)
    usd = (lambda t: round(runs * (t[0] * prices[0] + t[1] * prices[1]), 4)) if prices else (lambda t: None)
    return Estimate(model, prices is not None, runs, int(first), typical_n, max_iters, typical, worst, usd(typical),
                    usd(worst))


