"""Repair benchmark: every non-conforming W3C SHACL Core and SHACL-SPARQL case, scored against an oracle.

Per suite: the oracle (owl_memory_bench.repair.oracle, independent of the operators) decides which cases are
repairable, the minimal repair size and the least cost of a repair (owl_memory.repair.cost: retyping a typed node or
minting one costs more than a value); the repairer runs cold (compiling into a fresh memory), then again with that
memory. A repair is at the minimum when its change set costs no more than the oracle's cheapest (target: 95% of the
repairs). Every added literal another node holds is checked for copying (owl_memory_bench.repair.copies: the other
nodes' copies are changed and the case repaired again); the count must be 0. Real-world suites (dcat, datacube,
fabric): conforming instance data built from the DCAT-AP, RDF Data Cube and Knowledge Fabric core shapes
(owl_memory_bench.repair.instances), broken by each edit of the mutation catalogue (owl_memory_bench.repair.mutations);
the edit's inverse is a known repair, so every case is repairable and its size and cost bound the minimal ones. Rates
per kind. A node shape whose SHACL-SPARQL target pySHACL cannot run (fabric's GraphDIDShape selects ?resource, not
?this) is left out of the shapes in memory, and the suite's headline line names it.
Transfer: the test set repaired with an empty memory and with one trained on the train set, in the same run (the
empty memory learns as it goes through the test set, as a user's would); several pairs, the first the headline one.
Per pair: the share of the empty memory's pySHACL runs above the floor (2 a repaired case, 1 another) that the trained
memory saves, over the test set and over the cases whose every violation has an abstract signature training taught
(target: 80% there, with no fewer cases repaired). A test case that conforms as loaded (a W3C case whose data or
shapes file the data folder lacks) has nothing to repair: it is left out of both arms of a pair, named in the printed
line, and kept in the suite scores.
Sets "<mutation set>:multi" (dcat:multi, datacube:multi, construction:clinic:multi, ...): graphs broken by EDITS
independent edits each (owl_memory_bench.repair.mutations.combined, fixed seed), as real data rarely has one
violation.
Cost: validations = every pySHACL run a repair makes, counted at the one place the package calls pySHACL
(owl_memory.adapters.pyshacl.counting): verify rounds, nested trial checks and the memory's own item checks when it
compiles.
Sets "sprint" and "construction:<name>" are mutations of the shapes shipped in experiments/ (no data folder needed).
Set "shapes:PATH" (and "shapes:PATH:multi"): the same for any shapes file, e.g. one the repairer never saw; the named
mutation sets are names for such files. Targets of every kind get a root (class, implicit class, targetNode,
targetSubjectsOf, targetObjectsOf, a SHACL-SPARQL target whose query the builder can meet), and the same file and seed
give the same cases on every run. Set "cases:DIR": every Turtle file of a folder is one case holding its data and
shapes (tests/data/heldout and tests/data/standards are such folders: hand-written cases the repairer was never tuned
on). Sets "dash:DIR" and "manifests:DIR": DASH test cases and W3C test manifests in any folder (pySHACL's source
distribution carries both suites, more of them than the data folder). Set "brick": a mutation set over the validating
shapes the brickschema package ships (owl_memory_bench.repair.standards). Per suite, the cases left unrepaired are
printed grouped by the class of the repairer's reason, with the oracle's verdicts on them.
Run: python benchmarks/repair.py [--data DIR] [--suites w3c,sparql,dcat,datacube,fabric,brick,shapes:PATH,cases:DIR,
       dash:DIR,manifests:DIR]
       [--per-kind N] [--train SET[,SET][;SET...] --test SET[,SET][;SET...]] [--oracle-size N] [--json]
"""

from __future__ import annotations

import argparse
import json
import logging
import warnings
from pathlib import Path

from owl_memory.datadir import data_dir
from owl_memory_bench.repair.cases import Case
from owl_memory_bench.repair.mutation_sets import PER_KIND
from owl_memory_bench.repair.scoring import score_set
from owl_memory_bench.repair.suites import load_set
from owl_memory_bench.repair.transfer import MIN_RUNS, transfer

KIND_TARGET = 0.9  # repair rate every edit kind must reach
REPAIR_TARGET = 0.95  # share of the oracle-repairable cases a suite scored by the oracle must repair
MINIMAL_TARGET = 0.95  # share of the repairs at the oracle's least cost (or no dearer than the inverse edit)
TRANSFER_TARGET = 0.8  # share of the empty memory's runs above the floor the trained memory saves, on test cases
# whose violations' abstract signatures the train set has
TRAIN = ("dcat:multi;dcat:multi;construction:library:multi;dcat:multi;w3c:node,w3c:targets,w3c:misc;"
         "construction:library;dcat;w3c:property;w3c:node")  # the first pair is the headline one: real-world shapes
TEST = ("construction:clinic:multi;fabric:multi;construction:clinic:multi;datacube:multi;w3c:property,w3c:path;"
        "construction:clinic;datacube;w3c:node;w3c:property")  # -> an unseen domain, 3 edits per graph


def print_table(result: dict, title: str) -> None:
    """Print one pass as a plain table plus its summary."""
    print(f"\n== {title}")
    print(f"{'case':44} {'ok':>3} {'+':>3} {'-':>3} {'cost':>4} {'valid':>5} {'reuse':>5} {'oracle':>14}  note")
    for r in result["rows"]:
        o = r["oracle"] or {}
        verdict = f"{o.get('status', '-')}:{o.get('minimal_cost', o.get('minimal_size'))}" \
            if o.get("status") == "repairable" else o.get("status", "-")
        print(f"{r['case']:44} {'yes' if r['conforms'] else 'NO':>3} {r['added']:>3} {r['removed']:>3} "
              f"{r['cost']:>4} {r['validations']:>5} {r['reused']:>5} {verdict:>14}  {_note(r)}")
    print("summary:", json.dumps(result["summary"]))


def _note(r: dict) -> str:
    """What is left unrepaired and why (the repairer's words), or the absent inputs."""
    if r["missing"] and r["initial"] == 0:
        return f"inputs absent: {', '.join(r['missing'])}"
    return "; ".join(f"{s.split('|')[0]}: {why}" for s, why in r["reasons"].items())[:100]


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
    e, t, shared = tr["empty"], tr["trained"], tr["headroom_saved_shared"]
    met = "no test case has only what training taught" if shared is None else \
        "met" if shared >= TRANSFER_TARGET and tr["no_fewer_repaired"] else "MISSED"
    out = f"; {len(tr['left_out'])} more conform as loaded, left out" if tr["left_out"] else ""
    return (f"transfer {tr['train']} -> {tr['test']} ({tr['cases']} cases, {tr['violations_per_case']} violations "
            f"each{out}): the trained memory saved {_share(tr['headroom_saved'])} of the empty memory's pySHACL runs "
            f"above the floor ({MIN_RUNS} a repaired case, 1 another); on the {tr['shared_cases']} cases whose every "
            f"violation's abstract signature training taught {_share(shared)}, target >= {TRANSFER_TARGET:.0%}: "
            f"{met}; test violations whose abstract signature a train case has {tr['shared_share']:.0%}; runs per "
            f"repaired case {e['validations_per_repaired']} (empty) vs {t['validations_per_repaired']} (trained) = "
            f"{tr['validation_ratio']}x of a possible {tr['ratio_ceiling']}x; trained runs above the floor "
            f"{tr['above_floor_known']} in cases with a trained operator for every violation, "
            f"{tr['above_floor_unknown']} in the others; rounds {e['verify_iterations']} vs {t['verify_iterations']}, "
            f"nested checks {e['nested_validations']} vs {t['nested_validations']}, item checks {e['item_checks']} vs "
            f"{t['item_checks']}; violations with a trained abstract operator {tr['known_share']:.0%} (under the "
            f"back-off only {tr['backoff_share']:.0%}); time {tr['time_ratio']}x; repaired {e['repaired']} vs "
            f"{t['repaired']}")


def left_by_class(rows: list[dict]) -> dict:
    """The cases a pass left unrepaired, grouped by the class of the repairer's reason (its words up to the first
    ";" or "(", the component left out): reason -> {oracle status: cases}; the oracle's "repairable" ones are
    what the target misses, the others what no repair within its bound could fix either."""
    out: dict = {}
    for r in rows:
        if r["conforms"] or not r["initial"]:
            continue
        whys = sorted({why.split(";")[0].split(" (")[0] for why in r["reasons"].values()}) or ["no reason given"]
        status = (r["oracle"] or {}).get("status", "-")
        for why in whys:
            out.setdefault(why, {}).setdefault(status, 0)
            out[why][status] += 1
    return dict(sorted(out.items(), key=lambda kv: -sum(kv[1].values())))


def print_suite_headline(spec: str, c: dict, w: dict, dropped: list, rows: list[dict]) -> None:
    """Print one suite's headline: repaired / oracle-repairable against its target, minimal share, the cases left
    grouped by the class of their reason, per-kind rates, and the node shapes left out of its shapes (a SPARQL target
    pySHACL cannot run)."""
    kinds = c["by_kind"]
    target = f"target >= {REPAIR_TARGET:.0%}: {'met' if c['repaired_share'] >= REPAIR_TARGET else 'MISSED'}; " \
        if not kinds else ""
    minimal = "met" if c["minimal_share"] >= MINIMAL_TARGET else "MISSED"
    print(f"{spec}: repaired {c['repaired_of_oracle']}/{c['oracle_repairable']} oracle-repairable "
          f"({c['repaired_share']:.1%}); {target}at the least cost {c['minimal']}/{c['repaired_of_oracle']} "
          f"({c['minimal_share']:.0%}, target >= {MINIMAL_TARGET:.0%}: {minimal}); repaired beyond the oracle's bound "
          f"{c['repaired_beyond_oracle']}; oracle none {c['oracle_none']}, unknown {c['oracle_unknown']}; target "
          f"deletions {c['target_deletions']}; values copied from another node {c['copied_values']}; synthetic "
          f"values {c['synthetic_values']}; validations pass 1 {c['validations']} -> pass 2 {w['validations']}"
          + (f"; left out of the shapes: {', '.join(dropped)}" if dropped else ""))
    for why, statuses in left_by_class(rows).items():
        print(f"  {spec} left: {sum(statuses.values())} case(s), oracle "
              f"{', '.join(f'{k} {n}' for k, n in sorted(statuses.items()))}: {why}")
    for kind, k in kinds.items():
        ok = "met" if k["rate"] >= KIND_TARGET and not k["target_deletions"] else "MISSED"
        print(f"  {spec} {kind}: repaired {k['repaired']}/{k['cases']} ({k['rate']:.0%}); "
              f"target deletions {k['target_deletions']}; target >= {KIND_TARGET:.0%}: {ok}")


def main(argv=None) -> int:
    """Per suite: oracle verdicts, a cold pass compiling into a fresh memory, a warm rerun; then transfer."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=None, help="folder holding the suites (default: data_dir())")
    ap.add_argument("--suites", default="w3c,sparql,dcat,datacube,fabric",
                    help="comma-separated sets to score (w3c, w3c:<folder>, sparql, dcat, datacube, fabric, brick, "
                         "sprint, construction:<library|clinic|fleet|museum>, shapes:PATH for any shapes file, "
                         "cases:DIR, dash:DIR, manifests:DIR; a mutation set takes :multi)")
    ap.add_argument("--per-kind", type=int, default=PER_KIND,
                    help="mutation cases per edit kind (dcat, datacube, fabric, sprint, construction:*, shapes:*; "
                         "suites and transfer); a :multi set holds twice as many graphs")
    ap.add_argument("--train", default=TRAIN, help="set(s) a memory is trained on, comma-separated; several "
                    "transfer pairs: ';' between them, matched in order with --test (the first is the headline pair); "
                    "empty: no transfer")
    ap.add_argument("--test", default=TEST, help="set(s) the transfer is measured on (';' between pairs)")
    ap.add_argument("--oracle-size", type=int, default=2, help="largest change set the oracle tries")
    ap.add_argument("--oracle-budget", type=int, default=600, help="pySHACL runs the oracle may spend per case")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    args = ap.parse_args(argv)
    logging.getLogger("rdflib.term").setLevel(logging.CRITICAL)  # the W3C cases hold ill-typed literals on purpose
    warnings.filterwarnings("ignore", module="rdflib")
    data = args.data or data_dir()
    loaded: dict = {}

    def load(spec: str) -> list[Case]:
        """A set's cases, loaded once per run (a suite may also be a transfer set)."""
        if spec not in loaded:
            loaded[spec] = load_set(spec, data, args.per_kind)
        return loaded[spec]

    out: dict = {"suites": {}, "transfer": []}
    for spec in args.suites.split(","):
        out["suites"][spec] = score_set(load(spec), args.oracle_size, args.oracle_budget)
    pairs = list(zip(args.train.split(";"), args.test.split(";"), strict=True)) if args.train else []
    for train, test in pairs:
        tr = transfer([c for s in train.split(",") for c in load(s)], [c for s in test.split(",") for c in load(s)])
        out["transfer"].append({"train": train, "test": test, **tr})
    if args.json:
        print(json.dumps({"suites": {k: {**{p: v[p] if p == "shapes_left_out" else v[p]["summary"] for p in v},
                                         "left_by_class": left_by_class(v["cold"]["rows"])}
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
        print_suite_headline(spec, passes["cold"]["summary"], passes["warm"]["summary"], passes["shapes_left_out"],
                             passes["cold"]["rows"])
    for tr in out["transfer"]:
        print(transfer_line(tr))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
