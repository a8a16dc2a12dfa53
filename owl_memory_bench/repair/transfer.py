"""Transfer: a test set repaired with an empty memory and with one trained on a train set, in the same run."""

from __future__ import annotations

import tempfile
from pathlib import Path

from owl_memory import Memory
from owl_memory.compiled import repair_decisions
from owl_memory.repair.verification import abstract_signature, abstract_signatures, verify

from .cases import Case
from .scoring import run_all

MIN_RUNS = 2  # pySHACL runs every repaired case needs: one that finds the violation, one that confirms the repair
COST_KEYS = ("repaired", "validations", "validations_per_repaired", "seconds_per_repaired", "verify_iterations",
             "nested_validations", "item_checks")


def transfer(train: list[Case], test: list[Case]) -> dict:
    """Repair `test` with an empty memory and with one trained on `train` (same run); cost per repaired case, and per
    case both arms' runs and how many of its violations the trained memory held an abstract operator for. The
    floor: the fewest runs the cases allow (MIN_RUNS a repaired case, 1 any other); the ceiling: the empty memory's
    runs over that floor; headroom_saved: the share of the empty memory's runs above the floor that the trained memory
    did without, (empty - trained) / (empty - floor) over the test set, and headroom_saved_shared the same over the
    test cases that share their abstract signatures with what training taught: for every violation the trained
    memory holds an operator under an abstract key that keeps its value kind (shared_cases counts them; known_share
    is the share of test violations with such an operator, shared_share the share whose abstract signature some train
    case's violation has). Test cases that conform as loaded (nothing to repair: a W3C case whose data or shapes file
    the data folder lacks) are left out of both arms and named in "left_out"; the suite scores keep them."""
    left_out = [c.name for c in test if verify(c.data, c.shapes).conforms]
    test = [c for c in test if c.name not in left_out]
    with tempfile.TemporaryDirectory() as tmp:
        with Memory(Path(tmp) / "empty") as empty:
            cold = run_all(test, empty)
        with Memory(Path(tmp) / "trained") as trained:
            run_all(train, trained)
            known = [known_keys(c, trained) for c in test]
            warm = run_all(test, trained)
    c, w, per = cold["summary"], warm["summary"], "validations_per_repaired"
    seen = {s for case in train for s in signatures(case)}
    rows = [{"case": e["case"], "empty": _cost(e), "trained": _cost(t), "known": k, "shared": k[0] == k[2]}
            for e, t, k in zip(cold["rows"], warm["rows"], known, strict=True)]
    floor = sum(_floor(r["trained"]) for r in rows) / max(1, w["repaired"])
    test_signatures = [s for case in test for s in signatures(case, unique=False)]
    return {"empty": {k: c[k] for k in COST_KEYS}, "trained": {k: w[k] for k in COST_KEYS},
            "validation_ratio": round(c[per] / max(1e-9, w[per]), 3), "ratio_ceiling": round(c[per] / floor, 3),
            "headroom_saved": saved(rows), "headroom_saved_shared": saved([r for r in rows if r["shared"]]),
            "shared_cases": sum(r["shared"] for r in rows),
            "shared_share": round(sum(s in seen for s in test_signatures) / max(1, len(test_signatures)), 4),
            "unrepaired_cases": sum(_floor(r["trained"]) == 1 for r in rows), **headroom(rows),
            "time_ratio": round(c["seconds_per_repaired"] / max(1e-9, w["seconds_per_repaired"]), 3),
            "no_fewer_repaired": w["repaired"] >= c["repaired"], "cases": len(test), "left_out": left_out,
            "violations_per_case": round(sum(r["initial"] for r in cold["rows"]) / max(1, len(test)), 2),
            "known_share": round(sum(k[0] for k in known) / max(1, sum(k[2] for k in known)), 4),
            "backoff_share": round(sum(k[1] for k in known) / max(1, sum(k[2] for k in known)), 4), "rows": rows}


def saved(rows: list[dict]) -> float | None:
    """The share of the empty memory's pySHACL runs above the floor that the trained memory did without, over
    `rows`: (empty - trained) / (empty - floor) in total runs; None when the empty memory ran at the floor."""
    empty = sum(r["empty"]["validations"] for r in rows)
    floor = sum(_floor(r["trained"]) for r in rows)
    trained = sum(r["trained"]["validations"] for r in rows)
    return round((empty - trained) / (empty - floor), 3) if empty > floor else None


def signatures(case: Case, unique: bool = True):
    """The abstract signatures (the value-kind key) of a case's violations as loaded: a set, or a list with
    repeats."""
    found = [abstract_signature(v, case.shapes) for v in verify(case.data, case.shapes).violations]
    return set(found) if unique else found


def _floor(cost: dict) -> int:
    """The fewest pySHACL runs a case can take: MIN_RUNS when repaired, 1 (the run that finds it conforming, or
    finds what is left) otherwise."""
    return MIN_RUNS if cost["conforms"] and cost["initial"] else 1


def headroom(rows: list[dict]) -> dict:
    """The trained arm's runs above each case's floor, split by whether the trained memory held an operator under a
    value-kind abstract key for every violation of the case (known) or not (unknown: none, or the back-off only)."""
    above = lambda r: r["trained"]["validations"] - _floor(r["trained"])  # noqa: E731
    return {"above_floor_known": sum(above(r) for r in rows if r["known"][0] == r["known"][2]),
            "above_floor_unknown": sum(above(r) for r in rows if r["known"][0] < r["known"][2])}


def known_keys(case: Case, memory) -> tuple[int, int, int]:
    """Violations of the case: with a compiled operator in `memory` under an abstract key that keeps their value
    kind, with one under the component-and-role back-off only, and all of them."""
    found = verify(case.data, case.shapes).violations
    tiers = [[bool(repair_decisions(memory, k)) for k in abstract_signatures(v, case.shapes)] for v in found]
    return sum(any(t[:-1]) for t in tiers), sum(t[-1] and not any(t[:-1]) for t in tiers), len(found)


def _cost(row: dict) -> dict:
    """One repair's cost parts: pySHACL runs, verify rounds, nested trial checks, item checks, reused operators."""
    return {k: row[k] for k in ("conforms", "initial", "validations", "iterations", "nested", "item_checks",
                                "reused", "memory_keys")}
