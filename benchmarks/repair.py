"""Repair benchmark: every non-conforming W3C SHACL Core and SHACL-SPARQL case, scored against an oracle.

Per suite: the oracle (owl_memory.repair.oracle, independent of the operators) decides which cases are repairable
and the minimal repair size; the repairer runs cold (compiling into a fresh memory), then again with that memory.
Real-world suites (dcat, datacube, fabric): conforming instance data built from the DCAT-AP, RDF Data Cube and
Knowledge Fabric core shapes (owl_memory.repair.instances), broken by each edit of the mutation catalogue
(owl_memory.repair.mutations); the edit's inverse is a known repair, so every case is repairable and its size bounds
the minimal one. Rates per kind. A node shape whose SHACL-SPARQL target pySHACL cannot run (fabric's GraphDIDShape
selects ?resource, not ?this) is left out of the shapes in memory, and the suite's headline line names it.
Transfer: the test set repaired with an empty memory and with one trained on the train set, in the same run (the
empty memory learns as it goes through the test set, as a user's would); several pairs, the first the headline one.
A test case that conforms as loaded (a W3C case whose data or shapes file the data folder lacks) has nothing to repair:
it is left out of both arms of a pair, named in the printed line, and kept in the suite scores.
Sets "<mutation set>:multi" (dcat:multi, datacube:multi, construction:clinic:multi, ...): graphs broken by EDITS
independent edits each (owl_memory.repair.mutations.combined, fixed seed), as real data rarely has one violation.
Cost: validations = every pySHACL run a repair makes, counted at the one place the package calls pySHACL
(owl_memory.shacl_runs): verify rounds, nested trial checks and the memory's own item checks when it compiles.
Sets "sprint" and "construction:<name>" are mutations of the shapes shipped in experiments/ (no data folder needed).
Set "shapes:PATH" (and "shapes:PATH:multi"): the same for any shapes file, e.g. one the repairer never saw; the named
mutation sets are names for such files. Targets of every kind get a root (class, implicit class, targetNode,
targetSubjectsOf, targetObjectsOf), and the same file and seed give the same cases on every run.
Run: python benchmarks/repair.py [--data DIR] [--suites w3c,sparql,dcat,datacube,fabric,shapes:PATH] [--per-kind N]
       [--train SET[,SET][;SET...] --test SET[,SET][;SET...]] [--json]
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

from owl_memory import shacl_runs  # noqa: E402
from owl_memory.compiled import repair_decisions  # noqa: E402
from owl_memory.datadir import data_dir  # noqa: E402
from owl_memory.errors import InstanceError, LoadError  # noqa: E402
from owl_memory.rdfio import load_graph  # noqa: E402
from owl_memory.repair import repair, target_nodes  # noqa: E402
from owl_memory.repair.instances import build_instances, canonical  # noqa: E402
from owl_memory.repair.mutations import combined, mutations  # noqa: E402
from owl_memory.repair.oracle import oracle  # noqa: E402
from owl_memory.repair.verify import abstract_signatures, broken_sparql_targets, verify  # noqa: E402
from owl_memory.vocab import RDF, SH  # noqa: E402

MF = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#")
SHT = Namespace("http://www.w3.org/ns/shacl-test#")
SHAPE_PREDICATES = (SH.targetClass, SH.targetNode, SH.targetSubjectsOf, SH.targetObjectsOf, SH.target, SH.property,
                    SH.path)  # a file using none of these (and typing no sh:NodeShape / sh:PropertyShape) has no shapes


DASH = Namespace("http://datashapes.org/dash#")
SUITES = {"w3c": "shacl-w3c-core", "sparql": "shacl-sparql"}
REALWORLD = {"dcat": "ontologies/dcat-ap-SHACL.ttl", "datacube": "ontologies/datacube.shapes.ttl",
             "fabric": "ontologies/core-shapes.ttl"}  # fabric: Knowledge Fabric core shapes (PROF, DCAT, DCT)
REPO = Path(__file__).resolve().parents[1] / "experiments"
SHIPPED = {"sprint": REPO / "sprint1" / "shapes.ttl",  # mutation sets from shapes in the repo (no data folder)
           **{f"construction:{n}": REPO / "construction" / f"{n}.shapes.ttl"
              for n in ("library", "clinic", "fleet", "museum")}}
MIN_RUNS = 2  # pySHACL runs every repaired case needs: one that finds the violation, one that confirms the repair
PER_KIND = 6  # mutation cases per edit kind and suite (evenly spread over every edit that applies)
KIND_TARGET = 0.9  # repair rate every edit kind must reach
REPAIR_TARGET = 0.95  # share of the oracle-repairable cases a suite scored by the oracle must repair
EDITS = 3  # independent edits per graph in a ":multi" set
SEED = 11  # the draw of a ":multi" set's edits
TRANSFER_TARGET = 2.0  # times fewer pySHACL runs per repaired test case with the trained memory (issue 11)
TRAIN = ("dcat:multi;dcat:multi;construction:library:multi;dcat:multi;w3c:node,w3c:targets,w3c:misc;"
         "construction:library;dcat;w3c:property;w3c:node")  # the first pair is the headline one: real-world shapes
TEST = ("construction:clinic:multi;fabric:multi;construction:clinic:multi;datacube:multi;w3c:property,w3c:path;"
        "construction:clinic;datacube;w3c:node;w3c:property")  # -> an unseen domain, 3 edits per graph


def case_files(root: Path) -> list[Path]:
    """Every W3C test manifest file under `root` (files holding an mf:Manifest), sorted."""
    return sorted(p for p in root.rglob("*.ttl") if "mf:Manifest" in p.read_text(encoding="utf-8"))


def load_set(spec: str, data: Path, per_kind: int = PER_KIND) -> list[dict]:
    """The non-conforming cases of a set: "w3c", "w3c:<folder>" (e.g. w3c:node), "sparql", or a mutation set:
    "shapes:PATH" (any shapes file), "dcat", "datacube", "fabric" (shapes files in the data folder), "sprint" or
    "construction:<library|clinic|fleet|museum>" (shapes files in the repo); a mutation set with ":multi" appended
    (e.g. dcat:multi, shapes:my.ttl:multi) holds graphs broken by EDITS independent edits each."""
    base, multi = spec.removesuffix(":multi"), spec.endswith(":multi")
    named = shapes_file(base, data)
    if named is not None:
        return mutation_cases(*named, per_kind, multi)
    name, _, folder = base.partition(":")
    if name not in SUITES or multi:
        raise SystemExit(f"unknown set {spec!r}: use shapes:PATH or one of "
                         f"{', '.join([*SUITES, *REALWORLD, *SHIPPED])} (w3c takes :<folder>; a mutation set takes "
                         ":multi)")
    root = data / SUITES[name] / folder if folder else data / SUITES[name]
    if name == "sparql":
        cases = [dash_case(p) for p in sorted(root.rglob("*.ttl"))]
    else:
        cases = [w3c_case(p) for p in case_files(root)]
    return [c for c in cases if c["expected_conforms"] is False]


def shapes_file(base: str, data: Path) -> tuple[str, Path] | None:
    """The name and shapes file of a mutation set: "shapes:PATH" itself, or what a named set stands for (dcat,
    datacube, fabric in the data folder; sprint, construction:<name> in the repo); None for any other set."""
    if base.startswith("shapes:"):
        path = Path(base.removeprefix("shapes:")).expanduser()
        return f"shapes:{path.name}", path
    if base in SHIPPED:
        return base, SHIPPED[base]
    return (base, data / REALWORLD[base]) if base in REALWORLD else None


def load_shapes(path: Path) -> Graph:
    """The shapes in `path`, their blank nodes labelled canonically (the same cases for every parse of the file);
    SystemExit naming the file when it is absent, does not parse, or holds no SHACL shapes."""
    if not path.is_file():
        raise SystemExit(f"shapes file {path} not found: give an existing SHACL shapes file (shapes:PATH)")
    try:
        g = load_graph(path)
    except LoadError as e:
        raise SystemExit(f"shapes file {path}: {e}") from e
    if not any((None, p, None) in g for p in SHAPE_PREDICATES) and not {SH.NodeShape, SH.PropertyShape} & set(
            g.objects(None, RDF.type)):
        raise SystemExit(f"{path} holds no SHACL shapes (no sh:NodeShape, sh:PropertyShape, target, sh:property or "
                         "sh:path): give a shapes file, not a data file")
    return canonical(g)


def mutation_cases(name: str, path: Path, per_kind: int, multi: bool = False) -> list[dict]:
    """Instance data built from a shapes file, broken by up to `per_kind` edits of each kind that do violate; with
    `multi`, 2 x `per_kind` graphs broken by EDITS independent edits each (every edit violating on its own)."""
    shapes, dropped = runnable(load_shapes(path))
    try:
        base = build_instances(shapes).graph
    except InstanceError as e:
        raise SystemExit(f"shapes file {path}: {e}") from e
    found = mutations(base, shapes)
    breaks = lambda m: not verify(m.apply(base), shapes).conforms  # noqa: E731
    grouped: dict = {}
    for m in found:
        grouped.setdefault(m.kind, []).append(m)
    cases = [_mutation_case(f"{name}:multi", m, base, shapes, dropped)
             for m in combined(found, EDITS, 2 * per_kind, SEED, breaks)] if multi else []
    for _, same in [] if multi else sorted(grouped.items()):
        step = max(1, len(same) // per_kind)
        cases += [_mutation_case(name, m, base, shapes, dropped)
                  for m in [m for m in same[::step] if breaks(m)][:per_kind]]
    if not cases:
        raise SystemExit(f"shapes file {path}: no edit of the mutation catalogue breaks the data built from it (edits "
                         "need a property shape with a predicate path at a targeted node; a :multi set needs "
                         f"{EDITS} independent ones)")
    return cases


def runnable(shapes: Graph) -> tuple[Graph, list[str]]:
    """`shapes` without the node shapes whose SHACL-SPARQL target pySHACL cannot run (a sh:select that does not parse
    or selects no ?this: validation fails once it matches a node), and one line per shape left out. Done in memory:
    the file is the user's, and repairing it is not this benchmark's job."""
    faults = dict(broken_sparql_targets(shapes))
    owners = {s: faults[t] for s, t in shapes.subject_objects(SH.target) if t in faults}
    if not owners:
        return shapes, []
    drop = _closure(shapes, set(owners))
    kept = Graph()
    for t in shapes:
        if t[0] not in drop:
            kept.add(t)
    return kept, [f"{s.n3(shapes.namespace_manager)} (its SPARQL target {why.split(';')[0]})"
                  for s, why in sorted(owners.items())]


def _mutation_case(name: str, m, base: Graph, shapes: Graph, dropped: list[str]) -> dict:
    """A case: `base` broken by mutation `m`; its inverse edit is the witness repair."""
    return {"name": f"{name}/{m.name}", "data": m.apply(base), "shapes": shapes, "missing": [], "kind": m.kind,
            "expected_conforms": False, "same_file": False, "witness": len(m.added) + len(m.removed),
            "shapes_left_out": dropped}


def dash_case(path: Path) -> dict:
    """A DASH GraphValidationTestCase file -> a case; data and shapes are the file minus the test case entity."""
    g = Graph().parse(path, format="turtle", publicID=path.resolve().as_uri())
    tests = set(g.subjects(RDF.type, DASH.GraphValidationTestCase))
    drop = _closure(g, tests)
    stripped = Graph()
    for t in g:
        if t[0] not in drop:
            stripped.add(t)
    expected = next((g.value(r, SH.conforms) for t in tests for r in g.objects(t, DASH.expectedResult)), None)
    return {"name": f"{path.parent.name}/{path.stem}", "data": stripped, "shapes": stripped, "missing": [],
            "expected_conforms": bool(expected.toPython()) if isinstance(expected, Literal) else None,
            "same_file": True}


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
    return _closure(g, set(g.subjects(RDF.type, MF.Manifest)) | set(_entries(g)))


def _closure(g: Graph, seen: set) -> set:
    """`seen` plus the blank nodes reachable only from it."""
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
    """Repair one case and measure it: conformance, delta size, target deletions, every pySHACL run."""
    before = target_nodes(case["data"], case["shapes"])
    t0, runs0 = time.perf_counter(), shacl_runs.runs()
    res = repair(case["data"], case["shapes"], memory=memory, run_id=f"bench-{case['name']}")
    runs = shacl_runs.runs() - runs0
    after = target_nodes(res.graph, case["shapes"])
    lost_types = [t for t in res.removed if t[1] == RDF.type and t[0] in before and t[0] not in after]
    return {"case": case["name"], "conforms": res.conforms, "added": len(res.added), "removed": len(res.removed),
            "delta": len(res.added) + len(res.removed), "target_deletions": len(before - after) + len(lost_types),
            "iterations": res.verify_iterations, "nested": res.nested_checks, "validations": runs,
            "item_checks": runs - res.validations,
            "reused": res.compiled_reused, "compiled": len(res.compiled_new),
            "memory_keys": sorted({o["memory_key"] for o in res.operators_applied if o["memory_key"]}),
            "unrepaired": res.unrepaired, "reasons": res.reasons, "initial": res.initial_violations,
            "missing": case["missing"], "kind": case.get("kind"), "seconds": round(time.perf_counter() - t0, 3)}


def run_all(cases: list[dict], memory=None, verdicts: dict | None = None) -> dict:
    """Repair every case; with oracle verdicts, each row carries its case's verdict."""
    rows = []
    for case in cases:
        row = run_case(case, memory)
        row["oracle"] = (verdicts or {}).get(case["name"])
        rows.append(row)
    return {"rows": rows, "summary": summarize(rows)}


def oracle_verdicts(cases: list[dict], size: int, budget: int) -> dict:
    """The oracle's verdict (as a dict) for every case, by name; a mutation case's is its known inverse edit."""
    return {c["name"]: {"status": "repairable", "minimal_size": c["witness"]} if "witness" in c
            else oracle(c["data"], c["shapes"], max_size=size, budget=budget).to_dict() for c in cases}


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
    minimal = [r for r in hit if r["delta"] <= r["oracle"]["minimal_size"]]
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
            "verify_iterations": sum(r["iterations"] for r in rows),
            "nested_validations": sum(r["nested"] for r in rows),
            "item_checks": sum(r["item_checks"] for r in rows),
            "validations": sum(r["validations"] for r in rows),
            "validations_per_repaired": round(sum(r["validations"] for r in rows) / max(1, len(repaired)), 2),
            "seconds_per_repaired": round(sum(r["seconds"] for r in rows) / max(1, len(repaired)), 3),
            "reused_operators": sum(r["reused"] for r in rows), "compiled": sum(r["compiled"] for r in rows),
            "seconds": round(sum(r["seconds"] for r in rows), 2), "by_kind": by_kind(rows)}


def print_table(result: dict, title: str) -> None:
    """Print one pass as a plain table plus its summary."""
    print(f"\n== {title}")
    print(f"{'case':44} {'ok':>3} {'+':>3} {'-':>3} {'valid':>5} {'reuse':>5} {'oracle':>12}  note")
    for r in result["rows"]:
        o = r["oracle"] or {}
        verdict = f"{o.get('status', '-')}:{o.get('minimal_size')}" if o.get("status") == "repairable" \
            else o.get("status", "-")
        print(f"{r['case']:44} {'yes' if r['conforms'] else 'NO':>3} {r['added']:>3} {r['removed']:>3} "
              f"{r['validations']:>5} {r['reused']:>5} {verdict:>12}  {_note(r)}")
    print("summary:", json.dumps(result["summary"]))


def _note(r: dict) -> str:
    """What is left unrepaired and why (the repairer's words), or the absent inputs."""
    if r["missing"] and r["initial"] == 0:
        return f"inputs absent: {', '.join(r['missing'])}"
    return "; ".join(f"{s.split('|')[0]}: {why}" for s, why in r["reasons"].items())[:100]


def transfer(train: list[dict], test: list[dict]) -> dict:
    """Repair `test` with an empty memory and with one trained on `train` (same run); cost per repaired case, and per
    case both arms' runs and how many of its violations the trained memory held an abstract operator for. The
    ceiling: the empty memory's cost over the fewest runs the cases allow (MIN_RUNS a repaired case, 1 any other);
    headroom_saved: the share of the empty memory's runs above that floor the trained memory did without. Test cases
    that conform as loaded (nothing to repair: a W3C case whose data or shapes file the data folder lacks) are left
    out of both arms and named in "left_out"; the suite scores keep them."""
    from owl_memory import Memory

    left_out = [c["name"] for c in test if verify(c["data"], c["shapes"]).conforms]
    test = [c for c in test if c["name"] not in left_out]
    with tempfile.TemporaryDirectory() as tmp:
        with Memory(Path(tmp) / "empty") as empty:
            cold = run_all(test, empty)
        with Memory(Path(tmp) / "trained") as trained:
            run_all(train, trained)
            known = [known_keys(c, trained) for c in test]
            warm = run_all(test, trained)
    keys = ("repaired", "validations", "validations_per_repaired", "seconds_per_repaired", "verify_iterations",
            "nested_validations", "item_checks")
    c, w, per = cold["summary"], warm["summary"], "validations_per_repaired"
    rows = [{"case": e["case"], "empty": _cost(e), "trained": _cost(t), "known": k}
            for e, t, k in zip(cold["rows"], warm["rows"], known, strict=True)]
    floor = sum(_floor(r["trained"]) for r in rows) / max(1, w["repaired"])
    return {"empty": {k: c[k] for k in keys}, "trained": {k: w[k] for k in keys},
            "validation_ratio": round(c[per] / max(1e-9, w[per]), 3), "ratio_ceiling": round(c[per] / floor, 3),
            "headroom_saved": round((c[per] - w[per]) / (c[per] - floor), 3) if c[per] > floor else None,
            "unrepaired_cases": sum(_floor(r["trained"]) == 1 for r in rows), **headroom(rows),
            "time_ratio": round(c["seconds_per_repaired"] / max(1e-9, w["seconds_per_repaired"]), 3),
            "no_fewer_repaired": w["repaired"] >= c["repaired"], "cases": len(test), "left_out": left_out,
            "violations_per_case": round(sum(r["initial"] for r in cold["rows"]) / max(1, len(test)), 2),
            "known_share": round(sum(k[0] for k in known) / max(1, sum(k[2] for k in known)), 4),
            "backoff_share": round(sum(k[1] for k in known) / max(1, sum(k[2] for k in known)), 4), "rows": rows}


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


def known_keys(case: dict, memory) -> tuple[int, int, int]:
    """Violations of the case: with a compiled operator in `memory` under an abstract key that keeps their value
    kind, with one under the component-and-role back-off only, and all of them."""
    found = verify(case["data"], case["shapes"]).violations
    tiers = [[bool(repair_decisions(memory, k)) for k in abstract_signatures(v, case["shapes"])] for v in found]
    return sum(any(t[:-1]) for t in tiers), sum(t[-1] and not any(t[:-1]) for t in tiers), len(found)


def _cost(row: dict) -> dict:
    """One repair's cost parts: pySHACL runs, verify rounds, nested trial checks, item checks, reused operators."""
    return {k: row[k] for k in ("conforms", "initial", "validations", "iterations", "nested", "item_checks",
                                "reused", "memory_keys")}


def _share(x) -> str:
    """A share as a percentage, "-" when there was nothing to save."""
    return "-" if x is None else f"{x:.0%}"


def print_transfer(tr: dict) -> None:
    """Print one transfer pair per case: both arms' runs (rounds + nested checks + item checks) and known keys."""
    print(f"\n== transfer {tr['train']} -> {tr['test']}: per case, empty memory / trained memory")
    print(f"{'case':44} {'ok':>5} {'runs':>7} {'rounds':>7} {'nested':>7} {'items':>7} {'reuse':>5} {'known':>8}  "
          "trained: keys its reused operators were found under")
    for r in tr["rows"]:
        e, t = r["empty"], r["trained"]
        both = {k: f"{e[k]}/{t[k]}" for k in ("validations", "iterations", "nested", "item_checks")}
        ok = f"{'y' if e['conforms'] else 'N'}/{'y' if t['conforms'] else 'N'}"
        known = "{}+{}/{}".format(*r["known"])
        keys = ", ".join(dict.fromkeys(k.removeprefix("abstract:").replace("ConstraintComponent", "")
                                       if k.startswith("abstract:") else "concrete" for k in t["memory_keys"]))
        print(f"{r['case'][:44]:44} {ok:>5} {both['validations']:>7} {both['iterations']:>7} {both['nested']:>7} "
              f"{both['item_checks']:>7} {t['reused']:>5} {known:>8}  {keys[:90]}")
    print("summary:", json.dumps({k: v for k, v in tr.items() if k != "rows"}))


def transfer_line(tr: dict) -> str:
    """The headline sentence of one transfer pair."""
    e, t = tr["empty"], tr["trained"]
    met = "met" if tr["validation_ratio"] >= TRANSFER_TARGET and tr["no_fewer_repaired"] else "MISSED"
    out = f"; {len(tr['left_out'])} more conform as loaded, left out" if tr["left_out"] else ""
    return (f"transfer {tr['train']} -> {tr['test']} ({tr['cases']} cases, {tr['violations_per_case']} violations "
            f"each{out}): pySHACL runs per repaired case {e['validations_per_repaired']} (empty memory) vs "
            f"{t['validations_per_repaired']} (trained) = {tr['validation_ratio']}x, target >= {TRANSFER_TARGET}x: "
            f"{met} (no memory can beat {tr['ratio_ceiling']}x here: a repaired case needs {MIN_RUNS} runs, one not "
            f"repaired 1: {tr['unrepaired_cases']} such; the trained memory saved {_share(tr['headroom_saved'])} of "
            f"the runs above the floor); trained runs above that floor {tr['above_floor_known']} in "
            f"cases with a trained operator for every violation, {tr['above_floor_unknown']} in the others; rounds "
            f"{e['verify_iterations']} vs {t['verify_iterations']}, nested checks {e['nested_validations']} vs "
            f"{t['nested_validations']}, item checks {e['item_checks']} vs {t['item_checks']}; violations with a "
            f"trained abstract operator {tr['known_share']:.0%} (under the back-off only "
            f"{tr['backoff_share']:.0%}); time {tr['time_ratio']}x; repaired "
            f"{e['repaired']} vs {t['repaired']}")


def print_suite_headline(spec: str, c: dict, w: dict, dropped: list) -> None:
    """Print one suite's headline: repaired / oracle-repairable against its target, minimal share, per-kind rates,
    and the node shapes left out of its shapes (a SPARQL target pySHACL cannot run)."""
    kinds = c["by_kind"]
    target = f"target >= {REPAIR_TARGET:.0%}: {'met' if c['repaired_share'] >= REPAIR_TARGET else 'MISSED'}; " \
        if not kinds else ""
    print(f"{spec}: repaired {c['repaired_of_oracle']}/{c['oracle_repairable']} oracle-repairable "
          f"({c['repaired_share']:.1%}); {target}minimal {c['minimal']}/{c['repaired_of_oracle']} "
          f"({c['minimal_share']:.0%}); repaired beyond the oracle's bound {c['repaired_beyond_oracle']}; oracle none "
          f"{c['oracle_none']}, unknown {c['oracle_unknown']}; target deletions {c['target_deletions']}; "
          f"validations pass 1 {c['validations']} -> pass 2 {w['validations']}"
          + (f"; left out of the shapes: {', '.join(dropped)}" if dropped else ""))
    for kind, k in kinds.items():
        ok = "met" if k["rate"] >= KIND_TARGET and not k["target_deletions"] else "MISSED"
        print(f"  {spec} {kind}: repaired {k['repaired']}/{k['cases']} ({k['rate']:.0%}); "
              f"target deletions {k['target_deletions']}; target >= {KIND_TARGET:.0%}: {ok}")


def main(argv=None) -> int:
    """Per suite: oracle verdicts, a cold pass compiling into a fresh memory, a warm rerun; then transfer."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=None, help="folder holding the suites (default: data_dir())")
    ap.add_argument("--suites", default="w3c,sparql,dcat,datacube,fabric",
                    help="comma-separated sets to score (w3c, w3c:<folder>, sparql, dcat, datacube, fabric, sprint, "
                         "construction:<library|clinic|fleet|museum>, shapes:PATH for any shapes file; a mutation set "
                         "takes :multi)")
    ap.add_argument("--per-kind", type=int, default=PER_KIND,
                    help="mutation cases per edit kind (dcat, datacube, fabric, sprint, construction:*, shapes:*; "
                         "suites and transfer); a :multi set holds twice as many graphs")
    ap.add_argument("--train", default=TRAIN, help="set(s) a memory is trained on, comma-separated; several "
                    "transfer pairs: ';' between them, matched in order with --test (the first is the headline pair)")
    ap.add_argument("--test", default=TEST, help="set(s) the transfer is measured on (';' between pairs)")
    ap.add_argument("--oracle-size", type=int, default=2, help="largest change set the oracle tries")
    ap.add_argument("--oracle-budget", type=int, default=600, help="pySHACL runs the oracle may spend per case")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    args = ap.parse_args(argv)
    logging.getLogger("rdflib.term").setLevel(logging.CRITICAL)  # the W3C cases hold ill-typed literals on purpose
    warnings.filterwarnings("ignore", module="rdflib")
    data = args.data or data_dir()
    from owl_memory import Memory

    loaded: dict = {}

    def load(spec: str) -> list[dict]:
        """A set's cases, loaded once per run (a suite may also be a transfer set)."""
        if spec not in loaded:
            loaded[spec] = load_set(spec, data, args.per_kind)
        return loaded[spec]

    out: dict = {"suites": {}, "transfer": []}
    for spec in args.suites.split(","):
        cases = load(spec)
        verdicts = oracle_verdicts(cases, args.oracle_size, args.oracle_budget)
        with tempfile.TemporaryDirectory() as tmp, Memory(Path(tmp) / "mem") as memory:
            cold, warm = run_all(cases, memory, verdicts), run_all(cases, memory, verdicts)
        dropped = sorted({d for c in cases for d in c.get("shapes_left_out", [])})
        out["suites"][spec] = {"cold": cold, "warm": warm, "shapes_left_out": dropped}
    pairs = list(zip(args.train.split(";"), args.test.split(";"), strict=True))
    for train, test in pairs:
        tr = transfer([c for s in train.split(",") for c in load(s)], [c for s in test.split(",") for c in load(s)])
        out["transfer"].append({"train": train, "test": test, **tr})
    if args.json:
        print(json.dumps({"suites": {k: {p: v[p] if p == "shapes_left_out" else v[p]["summary"] for p in v}
                                     for k, v in out["suites"].items()},
                          "transfer": [{k: v for k, v in tr.items() if k != "rows"} for tr in out["transfer"]]}))
        return 0
    for spec, passes in out["suites"].items():
        print_table(passes["cold"], f"{spec}, pass 1: library operators, compiling into a fresh memory")
        print_table(passes["warm"], f"{spec}, pass 2: same cases, compiled operators applied first")
    for tr in out["transfer"]:
        print_transfer(tr)
    print("\n== headline")
    for spec, passes in out["suites"].items():
        print_suite_headline(spec, passes["cold"]["summary"], passes["warm"]["summary"], passes["shapes_left_out"])
    for tr in out["transfer"]:
        print(transfer_line(tr))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
