"""The success criteria of the layer experiments (E1–E8, experiments/ablation/layers.yaml), checked on a summary's
conditions by their config names:

- E6 ≥ max(E2..E5): the full layer cake's holdout success at the last checkpoint is at least that of every single
  layer (E2 L0, E3 L1, E4 L3, E5 L2);
- E7b < 50% of E7a's large returns: handle tools return fewer than half the large returns naive tools do;
- E8 auto-inject ≥ 80% of tool-mediated convergence: E8a's share of converged runs is at least 0.8 times E8b's.

A criterion is checked only when the ablation ran at least one of its arms (an A0-A4 ablation has none). Each is
met, not met, or not measurable (an arm is missing, the quantity compared with is 0 or unknown, or every arm it
compares scored 0: "0 ≥ 0" says nothing), with the numbers.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

MET, NOT_MET, UNMEASURABLE = "met", "not met", "not measurable"
SINGLE_LAYERS = ("E2", "E3", "E4", "E5")
ARMS = {"layer cake": ("E6", *SINGLE_LAYERS), "large returns": ("E7a", "E7b"),
        "auto inject": ("E8a", "E8b")}  # the arms each criterion compares


@dataclass(frozen=True)
class Criterion:
    """One success criterion: what it says, whether it holds (met / not met / not measurable) and the numbers."""

    name: str
    status: str
    detail: str

    def to_dict(self) -> dict:
        """JSON form (summary.json's `criteria`)."""
        return asdict(self)


def criteria(conditions: dict) -> tuple[Criterion, ...]:
    """The criteria whose arms the ablation ran (any of them), checked on a summary's conditions (name ->
    ConditionSummary)."""
    checks = {"layer cake": _layer_cake, "large returns": _large_returns, "auto inject": _auto_inject}
    return tuple(check(conditions) for key, check in checks.items() if any(a in conditions for a in ARMS[key]))


def _missing(conditions: dict, names: tuple[str, ...]) -> list[str]:
    """The arms among `names` the ablation did not run."""
    return [n for n in names if n not in conditions]


def _final(summary) -> float | None:
    """Holdout success at the last checkpoint (None without one)."""
    return summary.holdout[-1].mean if summary.holdout else None


def _layer_cake(conditions: dict) -> Criterion:
    """E6 >= max(E2..E5), on holdout success at the last checkpoint."""
    name = "E6 ≥ max(E2..E5) (holdout success, last checkpoint)"
    missing = _missing(conditions, ARMS["layer cake"])
    if missing:
        return Criterion(name, UNMEASURABLE, f"needs arms {', '.join(missing)}")
    finals = {n: f for n in ("E6", *SINGLE_LAYERS) if (f := _final(conditions[n])) is not None}
    if len(finals) < 1 + len(SINGLE_LAYERS):
        return Criterion(name, UNMEASURABLE, "an arm has no holdout checkpoint")
    best = max(SINGLE_LAYERS, key=lambda n: finals[n])
    numbers = f"E6 {finals['E6']:.3g} vs max {finals[best]:.3g} ({best}); " + \
        ", ".join(f"{n} {finals[n]:.3g}" for n in SINGLE_LAYERS)
    if not any(finals.values()):
        return Criterion(name, UNMEASURABLE, f"every arm scored 0; {numbers}")
    return Criterion(name, MET if finals["E6"] >= finals[best] else NOT_MET, numbers)


def _large_returns(conditions: dict) -> Criterion:
    """E7b's large returns below half of E7a's."""
    name = "E7b < 50% of E7a's large returns"
    missing = _missing(conditions, ARMS["large returns"])
    if missing:
        return Criterion(name, UNMEASURABLE, f"needs arms {', '.join(missing)}")
    naive, handles = conditions["E7a"].leakage.large_returns, conditions["E7b"].leakage.large_returns
    if not naive:
        return Criterion(name, UNMEASURABLE, f"E7a made no large return (E7b {handles})")
    share = handles / naive
    return Criterion(name, MET if share < 0.5 else NOT_MET, f"E7b {handles} vs E7a {naive} ({share:.0%})")


def _auto_inject(conditions: dict) -> Criterion:
    """E8a's convergence at least 80% of E8b's."""
    name = "E8a (auto-inject) ≥ 80% of E8b's (tool-mediated) convergence"
    missing = _missing(conditions, ARMS["auto inject"])
    if missing:
        return Criterion(name, UNMEASURABLE, f"needs arms {', '.join(missing)}")
    auto, tools = conditions["E8a"].converged_rate, conditions["E8b"].converged_rate
    if auto is None or not tools:
        return Criterion(name, UNMEASURABLE, f"E8b converged in {_share(tools)} of its runs, E8a in {_share(auto)}")
    return Criterion(name, MET if auto >= 0.8 * tools else NOT_MET,
                     f"E8a {auto:.0%} vs E8b {tools:.0%} of runs converged (ratio {auto / tools:.2f})")


def _share(rate: float | None) -> str:
    """A rate for a message ('unknown' when None)."""
    return "unknown" if rate is None else f"{rate:.0%}"
