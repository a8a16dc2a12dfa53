"""How the repair benchmark scores a repair: one row per case (conformance, change set, pySHACL runs), totals per
set against the oracle's verdicts, and rates per edit kind."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from owl_memory import Memory
from owl_memory.adapters.pyshacl import counting
from owl_memory.repair import repair, target_losses, target_nodes, verify
from owl_memory.repair.cost import change_cost
from owl_memory.vocab import RDF

from .cases import Case
from .copies import copied
from .oracle import oracle


def run_case(case: Case, memory=None) -> dict:
    """Repair one case and measure it: conformance, delta size, target deletions (a target that stops being one,
    but a conforming value dropped off a targeted property: owl_memory.repair.target_losses), every pySHACL run."""
    before = target_nodes(case.data, case.shapes)
    foci = {v.focus for v in verify(case.data, case.shapes).violations}  # not counted: the measure's own run
    t0 = time.perf_counter()
    with counting() as count:
        res = repair(case.data, case.shapes, memory=memory, run_id=f"bench-{case.name}")
    runs, seconds = count.runs, round(time.perf_counter() - t0, 3)
    after = target_nodes(res.graph, case.shapes)
    lost_types = [t for t in res.removed if t[1] == RDF.type and t[0] in before and t[0] not in after]
    return {"case": case.name, "conforms": res.conforms, "added": len(res.added), "removed": len(res.removed),
            "delta": len(res.added) + len(res.removed), "cost": change_cost(case.data, res.added, res.removed),
            "copied": len(copied(case.data, case.shapes, res.added)),
            "synthetic": sum(len(g.synthetic) for g in res.changes),
            "target_deletions": len(target_losses(before, res.graph, case.shapes, foci, res.removed)) + len(lost_types),
            "iterations": res.verify_iterations, "nested": res.nested_checks, "validations": runs,
            "item_checks": runs - res.validations,
            "reused": res.compiled_reused, "compiled": len(res.compiled_new),
            "memory_keys": sorted({o.memory_key for o in res.operators_applied if o.memory_key}),
            "unrepaired": res.unrepaired, "reasons": res.reasons, "initial": res.initial_violations,
            "missing": list(case.missing), "kind": case.kind, "seconds": seconds}


def run_all(cases: list[Case], memory=None, verdicts: dict | None = None) -> dict:
    """Repair every case; with oracle verdicts, each row carries its case's verdict."""
    rows = []
    for case in cases:
        row = run_case(case, memory)
        row["oracle"] = (verdicts or {}).get(case.name)
        rows.append(row)
    return {"rows": rows, "summary": summarize(rows)}


def score_set(cases: list[Case], oracle_size: int, oracle_budget: int) -> dict:
    """A set scored as the benchmark scores a suite: the oracle's verdicts, a cold pass compiling into a fresh memory,
    a warm rerun with that memory, and the node shapes left out of the cases' shapes."""
    verdicts = oracle_verdicts(cases, oracle_size, oracle_budget)
    with tempfile.TemporaryDirectory() as tmp, Memory(Path(tmp) / "mem") as memory:
        cold, warm = run_all(cases, memory, verdicts), run_all(cases, memory, verdicts)
    return {"cold": cold, "warm": warm, "shapes_left_out": sorted({d for c in cases for d in c.shapes_left_out})}


def oracle_verdicts(cases: list[Case], size: int, budget: int) -> dict:
    """The oracle's verdict (as a dict, with the least cost of a repair) for every case, by name; a mutation case's
    is its known inverse edit (its size and cost bound the minimal ones)."""
    return {c.name: {"status": "repairable", "minimal_size": c.witness, "minimal_cost": c.witness_cost}
            if c.witness is not None else oracle(c.data, c.shapes, max_size=size, budget=budget, cost=True).to_dict()
            for c in cases}


def at_minimum(row: dict) -> bool:
    """True when a repaired case's change set costs no more than the oracle's cheapest repair (no more triples than
    its smallest when the verdict carries no cost)."""
    o = row["oracle"]
    return row["cost"] <= o["minimal_cost"] if o.get("minimal_cost") is not None else \
        row["delta"] <= o["minimal_size"]


def by_kind(rows: list[dict]) -> dict:
    """Repair rate per edit kind of the mutation cases: {kind: {cases, repaired, rate, target_deletions}}."""
    out: dict = {}
    for r in rows:
        if r["kind"] is not None:
            k = out.setdefault(r["kind"], {"cases": 0, "repaired": 0, "target_deletions": 0})
            k["cases"] += 1
            k["repaired"] += bool(r["conforms"])
            k["target_deletions"] += r["target_deletions"]
    return {k: {**v, "rate": round(v["repaired"] / v["cases"], 4)} for k, v in sorted(out.items())}


def summarize(rows: list[dict]) -> dict:
    """Totals: repaired of the oracle-repairable cases, repaired beyond the oracle's bound, minimal repairs, costs."""
    repaired = [r for r in rows if r["conforms"] and r["initial"] > 0]
    provable = [r for r in rows if r["oracle"] and r["oracle"]["status"] == "repairable"]
    hit = [r for r in provable if r["conforms"]]
    minimal = [r for r in hit if at_minimum(r)]
    beyond = [r for r in repaired if r not in provable]
    statuses = [r["oracle"]["status"] for r in rows if r["oracle"]]
    return {"cases": len(rows), "oracle_repairable": len(provable), "repaired_of_oracle": len(hit),
            "repaired_share": round(len(hit) / max(1, len(provable)), 4),
            "oracle_none": statuses.count("none"), "oracle_unknown": statuses.count("unknown"),
            "oracle_conforms": statuses.count("conforms"), "repaired_beyond_oracle": len(beyond),
            "repaired": len(repaired), "minimal": len(minimal),
            "minimal_share": round(len(minimal) / max(1, len(hit)), 4),
            "mean_delta": round(sum(r["delta"] for r in repaired) / max(1, len(repaired)), 2),
            "target_deletions": sum(r["target_deletions"] for r in rows),
            "copied_values": sum(r["copied"] for r in rows), "synthetic_values": sum(r["synthetic"] for r in rows),
            "verify_iterations": sum(r["iterations"] for r in rows),
            "nested_validations": sum(r["nested"] for r in rows),
            "item_checks": sum(r["item_checks"] for r in rows),
            "validations": sum(r["validations"] for r in rows),
            "validations_per_repaired": round(sum(r["validations"] for r in rows) / max(1, len(repaired)), 2),
            "seconds_per_repaired": round(sum(r["seconds"] for r in rows) / max(1, len(repaired)), 3),
            "reused_operators": sum(r["reused"] for r in rows), "compiled": sum(r["compiled"] for r in rows),
            "seconds": round(sum(r["seconds"] for r in rows), 2), "by_kind": by_kind(rows)}
