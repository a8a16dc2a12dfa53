"""Repair benchmark: every non-conforming W3C SHACL Core case, repaired twice (cold, then with compiled memory).

Headline cost: validations = verify rounds + nested trial checks, i.e. every pySHACL run a repair makes.
Run: python benchmarks/repair.py [--data DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
import warnings
from pathlib import Path

from rdflib import BNode, Graph, Literal, Namespace, URIRef

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from owl_memory.datadir import data_dir  # noqa: E402
from owl_memory.repair import FIXED_TERM, repair, target_nodes  # noqa: E402
from owl_memory.vocab import RDF, SH  # noqa: E402

MF = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#")
SHT = Namespace("http://www.w3.org/ns/shacl-test#")


def case_files(root: Path) -> list[Path]:
    """Every W3C test manifest file under `root` (files holding an mf:Manifest), sorted."""
    return sorted(p for p in root.rglob("*.ttl") if "mf:Manifest" in p.read_text(encoding="utf-8"))


def w3c_case(path: Path) -> dict:
    """A manifest file -> {name, data, shapes, expected_conforms, same_file, missing}; the manifest is excluded."""
    g = Graph().parse(path, format="turtle", publicID=path.resolve().as_uri())
    manifest = _manifest_closure(g)
    stripped = Graph()
    for t in g:
        if t[0] not in manifest:
            stripped.add(t)
    entry = next(iter(_entries(g)))
    action, result = g.value(entry, MF.action), g.value(entry, MF.result)
    missing: list[str] = []
    data = _graph_at(g.value(action, SHT.dataGraph), path, stripped, missing)
    shapes = _graph_at(g.value(action, SHT.shapesGraph), path, stripped, missing)
    expected = g.value(result, SH.conforms)
    return {"name": f"{path.parent.name}/{path.stem}", "data": data, "shapes": shapes, "missing": missing,
            "expected_conforms": bool(expected.toPython()) if isinstance(expected, Literal) else None,
            "same_file": data is shapes}


def _entries(g: Graph):
    """The test entries of every manifest in `g`."""
    from rdflib.collection import Collection

    for m in g.subjects(RDF.type, MF.Manifest):
        for lst in g.objects(m, MF.entries):
            yield from Collection(g, lst)


def _manifest_closure(g: Graph) -> set:
    """Manifests, entries and the blank nodes only they reach (lists, actions, expected reports), to exclude."""
    seen = set(g.subjects(RDF.type, MF.Manifest)) | set(_entries(g))
    grown = True
    while grown:
        fresh = {o for s in seen for o in g.objects(s, None) if isinstance(o, BNode) and o not in seen
                 and all(r in seen for r in g.subjects(None, o))}
        seen |= fresh
        grown = bool(fresh)
    return seen


def _graph_at(iri, path: Path, stripped: Graph, missing: list) -> Graph:
    """The graph an action names: the file itself (manifest excluded), a sibling file, or empty when absent."""
    if iri is None or URIRef(iri) == URIRef(path.resolve().as_uri()):
        return stripped
    other = path.parent / Path(str(iri)).name
    if not other.exists():
        missing.append(other.name)
        return Graph()
    return Graph().parse(other, format="turtle", publicID=other.resolve().as_uri())


def run_case(case: dict, memory=None) -> dict:
    """Repair one case and measure it: conformance, delta size, target deletions, verify iterations."""
    before = target_nodes(case["data"], case["shapes"])
    t0 = time.perf_counter()
    res = repair(case["data"], case["shapes"], memory=memory, run_id=f"bench-{case['name']}")
    after = target_nodes(res.graph, case["shapes"])
    lost_types = [t for t in res.removed if t[1] == RDF.type and t[0] in before and t[0] not in after]
    fixed = bool(res.unrepaired) and all(FIXED_TERM in r for r in res.reasons.values())
    return {"case": case["name"], "conforms": res.conforms, "added": len(res.added), "removed": len(res.removed),
            "delta": len(res.added) + len(res.removed), "target_deletions": len(before - after) + len(lost_types),
            "iterations": res.verify_iterations, "nested": res.nested_checks, "validations": res.validations,
            "reused": res.compiled_reused,
            "compiled": len(res.compiled_new),
            "unrepaired": res.unrepaired, "reasons": res.reasons, "initial": res.initial_violations,
            "impossible": fixed and not res.conforms, "missing": case["missing"],
            "seconds": round(time.perf_counter() - t0, 3)}


def run_all(root: Path, memory=None) -> dict:
    """Repair every non-conforming case under `root`; returns rows and summary figures."""
    rows = []
    for path in case_files(root):
        case = w3c_case(path)
        if case["expected_conforms"] is False:
            rows.append(run_case(case, memory))
    return {"rows": rows, "summary": summarize(rows)}


def summarize(rows: list[dict]) -> dict:
    """Totals: cases, not applicable (inputs missing, nothing to repair), impossible, repaired, shares, deltas."""
    na = [r for r in rows if r["missing"] and r["initial"] == 0]
    impossible = [r for r in rows if r["impossible"]]
    repairable = len(rows) - len(na) - len(impossible)
    repaired = [r for r in rows if r["conforms"] and r not in na]
    return {"cases": len(rows), "not_applicable": len(na), "impossible": len(impossible), "repairable": repairable,
            "repaired": len(repaired), "repaired_share": round(len(repaired) / max(1, repairable), 4),
            "repaired_share_of_all": round(len(repaired) / max(1, len(rows)), 4),
            "mean_delta": round(sum(r["delta"] for r in repaired) / max(1, len(repaired)), 2),
            "target_deletions": sum(r["target_deletions"] for r in rows),
            "verify_iterations": sum(r["iterations"] for r in rows),
            "nested_validations": sum(r["nested"] for r in rows),
            "validations": sum(r["validations"] for r in rows),
            "reused_operators": sum(r["reused"] for r in rows), "compiled": sum(r["compiled"] for r in rows),
            "seconds": round(sum(r["seconds"] for r in rows), 2)}


def print_table(result: dict, title: str) -> None:
    """Print one pass as a plain table plus its summary."""
    print(f"\n== {title}")
    print(f"{'case':40} {'ok':>3} {'+':>3} {'-':>3} {'rounds':>6} {'nested':>6} {'valid':>5} {'reuse':>5}  note")
    for r in result["rows"]:
        print(f"{r['case']:40} {'yes' if r['conforms'] else 'NO':>3} {r['added']:>3} {r['removed']:>3} "
              f"{r['iterations']:>6} {r['nested']:>6} {r['validations']:>5} {r['reused']:>5}  {_note(r)}")
    print("summary:", json.dumps(result["summary"]))


def _note(r: dict) -> str:
    """Why a row is special: inputs missing, impossible under the rules, or what is left."""
    if r["missing"] and r["initial"] == 0:
        return f"not applicable: {', '.join(r['missing'])} absent, the rest conforms"
    if r["impossible"]:
        return "impossible: " + FIXED_TERM + " (" + ", ".join(s.split("|")[0] for s in r["unrepaired"]) + ")"
    return "; ".join(f"{s.split('|')[0]}: {why}" for s, why in r["reasons"].items())[:110]


def main(argv=None) -> int:
    """Run both passes and print tables, summaries and the pass 1 / pass 2 validation ratio."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=None, help="folder holding shacl-w3c-core/ (default: data_dir())")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    args = ap.parse_args(argv)
    logging.getLogger("rdflib.term").setLevel(logging.CRITICAL)  # the W3C cases hold ill-typed literals on purpose
    warnings.filterwarnings("ignore", module="rdflib")
    root = (args.data or data_dir()) / "shacl-w3c-core"
    from owl_memory import Memory

    with tempfile.TemporaryDirectory() as tmp, Memory(Path(tmp) / "mem") as memory:
        cold = run_all(root, memory)
        warm = run_all(root, memory)
    c, w = cold["summary"], warm["summary"]
    ratios = {"validation_ratio": round(c["validations"] / max(1, w["validations"]), 3),
              "round_ratio": round(c["verify_iterations"] / max(1, w["verify_iterations"]), 3),
              "nested_ratio": round(c["nested_validations"] / max(1, w["nested_validations"]), 3)}
    if args.json:
        print(json.dumps({"cold": c, "warm": w, **ratios}))
        return 0
    print_table(cold, "pass 1: library operators, compiling into a fresh memory")
    print_table(warm, "pass 2: same cases, compiled operators from pass 1 applied first")
    print(f"validations (every pySHACL run = verify rounds + nested trial checks): pass 1 {c['validations']}, "
          f"pass 2 {w['validations']}, pass 1 / pass 2 = {ratios['validation_ratio']}")
    print(f"verify rounds: {c['verify_iterations']} -> {w['verify_iterations']} (at their floor: detect + confirm); "
          f"nested trial checks: {c['nested_validations']} -> {w['nested_validations']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
