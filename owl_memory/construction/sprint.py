"""Ontology construction sprints: CQs + seed ontology + shapes -> propose / apply / verify / repair until done.

Violations that exist before a sprint starts (its *baseline*, e.g. shapes that target a vocabulary's own
class IRIs) are reported but are not the sprint's to fix: with `baseline: exclude` (the default) the sprint's
`conforms` means "no violation except the baseline ones", and the baseline focus nodes are protected from
repair. With `baseline: repair` every violation counts and the repairer may touch every node.

A sprint that ends with every CQ passing and a conforming graph compiles, per CQ it solved, a RepairOperator
keyed by the CQ's signature (`cq:<hash of the query>`) whose action schema points to the delta (a blob
handle) that answered it; the next sprint with the same memory applies those deltas by computation first.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import yaml
from rdflib import Graph
from rdflib.namespace import OWL, RDF

from .. import compiled
from ..datadir import data_dir
from ..errors import ConfigError, LoadError, UnknownItem
from ..model import CqAnswer, Item, sha256
from ..rdfio import load_graph, read_text
from ..repair.verify import VerifyResult, Violation, verify
from ..resources import shipped
from .cq import CompetencyQuestion, evaluate_all, load_cqs
from .proposer import Proposal, SymbolicProposer
from .workspace import Workspace, nt_lines, parse_lines

SPRINT_KEYS = {"name", "description", "ontology", "shapes", "cqs", "namespace", "baseline", "budget"}
BASELINES = ("exclude", "repair")
MAX_PROPOSALS = 3  # proposals for one CQ before it counts as stuck
_DATA_VAR = re.compile(r"\$\{OWL_MEMORY_DATA\}|\$OWL_MEMORY_DATA\b")


@dataclass
class Sprint:
    """A sprint definition, read from YAML with every path resolved.

    Args:
        name: short name, used in tags and item titles.
        ontology: seed ontology files (merged into the base graph).
        shapes: SHACL shape files (merged into the shapes graph).
        cqs: the competency questions.
        namespace: IRI prefix for nodes the proposer mints.
        baseline: "exclude" (pre-existing violations are not the sprint's) or "repair".
        max_steps: propose / verify / repair steps at most.
        max_repair_rounds: rounds one repair call may take.
    """

    name: str
    ontology: list
    shapes: list
    cqs: list
    namespace: str
    description: str = ""
    baseline: str = "exclude"
    max_steps: int = 20
    max_repair_rounds: int = 10
    source: str = ""


def default_sprint() -> Path:
    """The shipped sprint 1 (experiments/sprint1, installed as owl_memory.sprint1)."""
    return shipped("sprint1", "sprint.yaml")


def load_sprint(path: str | Path) -> Sprint:
    """Read a sprint YAML; relative paths resolve against its folder, ${OWL_MEMORY_DATA} against the data dir."""
    path = Path(path)
    try:
        data = yaml.safe_load(read_text(path, "sprint file"))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise LoadError(f"invalid YAML: {getattr(e, 'problem', e)}", source=str(path),
                        line=mark.line + 1 if mark else None) from e
    _check_keys(data, path)
    folder, name = path.resolve().parent, _slug(str(data.get("name") or path.parent.name))
    budget = data.get("budget") or {}
    cqs_source = data["cqs"]
    cqs = load_cqs(_resolve(cqs_source, folder) if isinstance(cqs_source, str) else cqs_source)
    return Sprint(name=name, ontology=[_resolve(p, folder) for p in _as_list(data["ontology"])],
                  shapes=[_resolve(p, folder) for p in _as_list(data.get("shapes"))], cqs=cqs,
                  namespace=str(data.get("namespace") or f"http://w3id.org/owl-memory/sprint/{name}/"),
                  description=str(data.get("description") or ""), baseline=str(data.get("baseline", "exclude")),
                  max_steps=int(budget.get("max_steps", 20)),
                  max_repair_rounds=int(budget.get("max_repair_rounds", 10)), source=str(path))


def _check_keys(data, path: Path) -> None:
    """LoadError with a fix-it message when the sprint mapping is malformed."""
    if not isinstance(data, dict):
        raise LoadError("a sprint file is a mapping with `ontology:`, `shapes:` and `cqs:`", source=str(path))
    missing = [k for k in ("ontology", "cqs") if not data.get(k)]
    unknown = sorted(set(data) - SPRINT_KEYS)
    if missing or unknown:
        raise LoadError(f"missing keys {missing}, unknown keys {unknown}; allowed: {sorted(SPRINT_KEYS)}",
                        source=str(path))
    if str(data.get("baseline", "exclude")) not in BASELINES:
        raise LoadError(f"baseline must be one of {BASELINES}", source=str(path))


def _as_list(value) -> list:
    """A value or list of values as a list."""
    return [] if value is None else [value] if isinstance(value, str) else list(value)


def _resolve(text: str, folder: Path) -> Path:
    """A sprint path: ${OWL_MEMORY_DATA} substituted (ConfigError when that folder is absent), relative to folder."""
    text = str(text)
    if _DATA_VAR.search(text):
        text = _DATA_VAR.sub(lambda _: str(data_dir(required=True)), text)
    p = Path(os.path.expanduser(text))
    p = p if p.is_absolute() else folder / p
    if not p.exists():
        raise ConfigError(f"sprint file {p} not found; fix the path in the sprint YAML (relative paths start at "
                          f"{folder})")
    return p


def _slug(text: str) -> str:
    """A name without whitespace (titles stay within 10 words)."""
    return "-".join(text.split()) or "sprint"


def merged(paths: list) -> Graph:
    """One graph holding every file of a list (namespace bindings kept)."""
    g = Graph()
    for p in paths:
        part = load_graph(p)
        for prefix, ns in part.namespaces():
            g.bind(prefix, ns, override=False)
        g += part
    return g


def cq_signature(cq: CompetencyQuestion) -> str:
    """The signature a compiled answer to a CQ is stored under: cq:<16 hex of query, prefixes and expectation>."""
    text = json.dumps([" ".join(cq.query.split()), sorted(cq.prefixes.items()), cq.expected, cq.bindings],
                      sort_keys=True, default=str)
    return "cq:" + sha256(text)[:16]


# ---------------------------------------------------------------- the run


@dataclass
class _State:
    """Counters and bookkeeping of one sprint run."""

    verify_iterations: int = 0
    nested_checks: int = 0
    lm_calls: int = 0
    compiled_reused: int = 0
    compiled_new: int = 0
    repair_reused: int = 0
    repair_compiled: int = 0
    proposals: list = field(default_factory=list)
    solved: dict = field(default_factory=dict)  # cq id -> deltas that answered it
    stuck: set = field(default_factory=set)
    proposed: dict = field(default_factory=dict)  # cq id -> proposals made
    unrepaired: list = field(default_factory=list)
    used_ops: list = field(default_factory=list)


class SprintRun:
    """One run of a sprint over a memory: a Workspace, a proposer, verify and repair.

    Args:
        sprint: a Sprint (or a path to its YAML).
        memory: the Memory holding blobs (versions, deltas, reports) and compiled operators.
        proposer: an LLMProposer or None; the SymbolicProposer is always there as the fallback.
        progress: optional callback(event, info) for displays.
        run_id: the provenance run id (a timestamped one when None).
    """

    def __init__(self, sprint, memory, proposer=None, progress: Callable | None = None, run_id: str | None = None):
        self.sprint = sprint if isinstance(sprint, Sprint) else load_sprint(sprint)
        self.memory = memory
        self.symbolic = SymbolicProposer(self.sprint.namespace)
        self.llm = proposer
        self.progress = progress or (lambda event, info: None)
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%f")
        self.run_id = run_id or f"sprint-{self.sprint.name}-{stamp}"
        self.ws = Workspace(memory, merged(self.sprint.ontology), merged(self.sprint.shapes))
        self.state = _State()
        self.baseline: VerifyResult | None = None
        self.baseline_keys: set = set()

    # ---- verification in the sprint's scope ----
    def _verify(self) -> VerifyResult:
        """Verify the working graph (counted as one verify iteration)."""
        self.state.verify_iterations += 1
        return verify(self.ws.working, self.ws.shapes, blobs=self.memory.blobs)

    def _outside_baseline(self, v: VerifyResult) -> list:
        """The violations of `v` that are the sprint's: all of them minus the baseline ones."""
        return [x for x in v.violations if _key(x) not in self.baseline_keys]

    def _frozen_nodes(self) -> set:
        """Nodes the sprint must not edit: the baseline focus nodes when the baseline is excluded."""
        return {x.focus for x in self.baseline.violations} if self.sprint.baseline == "exclude" else set()

    # ---- the loop ----
    def run(self) -> dict:
        """Run the sprint to the end (all CQs pass and in-scope conformance, or the step budget); a summary."""
        self._check_baseline()
        v = self._replay_compiled()
        for step in range(self.sprint.max_steps):
            cq = self._next_cq()
            if cq is None and v is not None and self._settled(v):
                break
            v = self._step(step, cq)
        return self._finish(v)

    def _check_baseline(self) -> None:
        """Verify the seed before any change: what fails now is the baseline."""
        self.baseline = verify(self.ws.working, self.ws.shapes, blobs=self.memory.blobs)
        if self.sprint.baseline == "exclude":
            self.baseline_keys = {_key(x) for x in self.baseline.violations}
        self.progress("baseline", {"violations": self.baseline.violation_count})

    def _next_cq(self) -> CompetencyQuestion | None:
        """The first failing CQ that is not stuck (proposed MAX_PROPOSALS times, or with no proposal)."""
        results = evaluate_all(self.sprint.cqs, self.ws.working)
        for c in (c for c in self.sprint.cqs if not _passed(results, c.id)):
            if self.state.proposed.get(c.id, 0) >= MAX_PROPOSALS:
                self.state.stuck.add(c.id)
            if c.id not in self.state.stuck:
                return c
        return None

    def _settled(self, v: VerifyResult) -> bool:
        """True when nothing in scope is violated, or repair made no progress on what is left."""
        mine = _sigs(self._outside_baseline(v))
        return not mine or self.state.unrepaired == mine

    def _step(self, step: int, cq: CompetencyQuestion | None) -> VerifyResult:
        """One step: propose for `cq` (when given), apply, verify, repair what is not the baseline."""
        if cq is not None:
            self.state.proposed[cq.id] = self.state.proposed.get(cq.id, 0) + 1
            proposal = self._propose(cq)
            if not proposal.passes or not proposal.added:
                self.state.stuck.add(cq.id)
            else:
                delta = self.ws.apply(proposal.added, note=f"propose {cq.id}")
                self.state.solved.setdefault(cq.id, []).append(delta)
        v = self._verify()
        self.progress("step", {"step": step + 1, "cq": cq.id if cq else None, "violations": len(
            self._outside_baseline(v))})
        if self._outside_baseline(v):
            v = self._repair(cq)
        return v

    def _propose(self, cq: CompetencyQuestion) -> Proposal:
        """The LLM proposer's answer when there is one and it works, else the symbolic one."""
        if self.llm is not None:
            before = self.llm.calls
            proposal = self.llm.propose(cq, self.ws.working, self.ws.shapes, memory=self.memory)
            self.state.lm_calls += self.llm.calls - before
            if proposal.passes and proposal.added:
                self.state.proposals.append(proposal.to_dict() | {"added": len(proposal.added)})
                return proposal
        proposal = self.symbolic.propose(cq, self.ws.working, self.ws.shapes)
        self.state.proposals.append(proposal.to_dict() | {"added": len(proposal.added)})
        self.progress("propose", {"cq": cq.id, "source": proposal.source, "added": len(proposal.added)})
        return proposal

    def _repair(self, cq: CompetencyQuestion | None) -> VerifyResult:
        """Repair with the memory's compiled operators; what repair hands back goes to the proposer, then repair."""
        v = self._repair_once(cq)
        mine = self._outside_baseline(v)
        extra = self.symbolic.propose_for_violations(mine, self.ws.working, self.ws.shapes) if mine else []
        delta = self.ws.apply([t for t in extra if t[0] not in self._frozen_nodes()], note="propose missing values")
        if delta is None:
            return v
        self._attribute(cq, delta)
        v = self._verify()
        return self._repair_once(cq) if self._outside_baseline(v) else v

    def _repair_once(self, cq: CompetencyQuestion | None) -> VerifyResult:
        """One repair call on the working graph (base triples protected), applied as a delta, then verified."""
        from ..repair import repair

        r = repair(self.ws.working, self.ws.shapes, memory=self.memory, max_rounds=self.sprint.max_repair_rounds,
                   protected=frozenset(self.ws.base), run_id=self.run_id)
        self.state.verify_iterations += r.verify_iterations
        self.state.nested_checks += r.nested_checks
        self.state.repair_reused += r.compiled_reused
        self.state.repair_compiled += len(r.compiled_new)
        added = [t for t in r.added if t[0] not in self._frozen_nodes()]
        self._attribute(cq, self.ws.apply(added, r.removed, note=f"repair {cq.id if cq else 'graph'}"))
        self.progress("repair", {"added": len(r.added), "removed": len(r.removed), "conforms": r.conforms})
        v = self._verify()
        self.state.unrepaired = _sigs(self._outside_baseline(v))
        return v

    def _attribute(self, cq: CompetencyQuestion | None, delta) -> None:
        """Count a delta as part of the answer to `cq` (what a rerun replays for it)."""
        if delta is not None and cq is not None:
            self.state.solved.setdefault(cq.id, []).append(delta)

    # ---- compiled answers ----
    def _replay_compiled(self) -> VerifyResult | None:
        """Apply, in one delta, the compiled answers of every failing CQ; verify once; None if there were none."""
        results = evaluate_all(self.sprint.cqs, self.ws.working)
        added, removed = set(), set()
        for cq in self.sprint.cqs:
            if _passed(results, cq.id):
                continue
            op = compiled.cq_answer(self.memory, cq_signature(cq))
            change = self._delta_of(op) if op is not None else None
            if change is not None:
                added |= set(change[0])
                removed |= set(change[1])
                self.state.used_ops.append((op.id, cq.id))
        if not self.state.used_ops:
            return None
        self.ws.apply(added, removed, note="compiled CQ answers")
        self.state.compiled_reused += len(self.state.used_ops)
        self.progress("compiled", {"reused": len(self.state.used_ops)})
        v = self._verify()
        results = evaluate_all(self.sprint.cqs, self.ws.working)
        for op_id, cq_id in self.state.used_ops:
            self.memory.record_use(op_id, _passed(results, cq_id) and not self._outside_baseline(v))
        return v

    def _delta_of(self, op: Item) -> tuple[list, list] | None:
        """The triples a compiled answer adds and removes (from its delta handle); None, and a recorded
        failure, when the handle is missing or unreadable."""
        try:
            payload = json.loads(self.memory.blobs.load(op.action_schema.delta))
            return list(parse_lines(payload["added"])), list(parse_lines(payload["removed"]))
        except (UnknownItem, KeyError, ValueError, TypeError):
            self.memory.record_use(op.id, False)
            return None

    def _compile(self, results) -> int:
        """Store one RepairOperator per CQ this run answered (its net delta); returns how many are new."""
        new = 0
        applies_to = sorted(str(o) for o in self.ws.base.subjects(RDF.type, OWL.Ontology))
        for cq in self.sprint.cqs:
            deltas = self.state.solved.get(cq.id)
            if not deltas or not _passed(results, cq.id):
                continue
            new += self._compile_one(cq, deltas, applies_to)
        return new

    def _compile_one(self, cq: CompetencyQuestion, deltas: list, applies_to: list) -> int:
        """Store the compiled answer of one CQ; 1 when it was not stored before."""
        added = set()
        for d in deltas:
            a, r = self.ws.delta_triples(d)
            added = (added - set(r)) | set(a)
        lines = nt_lines(t for t in added if t in self.ws.working)
        payload = json.dumps({"added": lines, "removed": [], "cq": cq.id, "signature": cq_signature(cq)},
                             sort_keys=True)
        ref = self.memory.blobs.put(payload, kind="delta")
        new = compiled.store_cq_answer(
            self.memory, signature=cq_signature(cq), title=f"Answer competency question {_slug(cq.id)}",
            summary=f"Use when competency question {cq.id} fails on a {self.sprint.name} graph: "
                    f"adds the {len(lines)} triples that made it pass and conform.",
            payload=payload, answer=CqAnswer(ref.key, len(lines)), applies_to=applies_to,
            tags=(self.sprint.name, cq.id), query=cq.query, run_id=self.run_id)
        return int(new)

    def _finish(self, v: VerifyResult | None) -> dict:
        """Final check, compile on success, and the JSON-compatible summary."""
        v = v if v is not None else self._verify()
        results = evaluate_all(self.sprint.cqs, self.ws.working)
        mine = self._outside_baseline(v)
        passed = sum(r.passed for r in results)
        if passed == len(results) and not mine:
            self.state.compiled_new = self._compile(results)
        self.progress("done", {"cqs_passed": passed, "cqs_total": len(results), "conforms": not mine})
        return {"sprint": self.sprint.name, "run": self.run_id, "cqs_passed": passed, "cqs_total": len(results),
                "conforms": not mine, "conforms_full": v.conforms, "violations": len(mine),
                "violation_signatures": sorted(set(_sigs(mine)))[:20], "baseline": self._baseline_summary(v),
                **self._counters(), "cqs": [r.to_dict() for r in results], "versions": len(self.ws.versions),
                "head": self.ws.head.key, "deltas": [d.to_dict() for d in self.ws.deltas][-10:],
                "report_ref": v.report_ref.key if v.report_ref else None,
                "triples_added": len(set(self.ws.working) - set(self.ws.base))}

    def _baseline_summary(self, v: VerifyResult) -> dict:
        """The baseline policy, its violations and how many of them the sprint's changes resolved."""
        before, after = {_key(x) for x in self.baseline.violations}, {_key(x) for x in v.violations}
        return {"policy": self.sprint.baseline, "violations": len(before), "resolved": len(before - after),
                "signatures": self.baseline.signatures}

    def _counters(self) -> dict:
        """The run's counters for the summary."""
        s = self.state
        return {"verify_iterations": s.verify_iterations, "baseline_checks": 1, "nested_checks": s.nested_checks,
                "validations": s.verify_iterations + s.nested_checks + 1, "lm_calls": s.lm_calls,
                "compiled_reused": s.compiled_reused + s.repair_reused, "compiled_cq_reused": s.compiled_reused,
                "compiled_repair_reused": s.repair_reused, "compiled_new": s.compiled_new + s.repair_compiled,
                "proposals": len(s.proposals), "stuck": sorted(s.stuck)}


def run_sprint(sprint, memory, *, lm=None, progress: Callable | None = None, run_id: str | None = None) -> dict:
    """Run a sprint (a Sprint or a YAML path) over a memory; `lm` (a DSPy LM) adds the LLM proposer."""
    sprint = sprint if isinstance(sprint, Sprint) else load_sprint(sprint)
    proposer = None
    if lm is not None:
        from ..llm.proposer import LLMProposer

        proposer = LLMProposer(lm, namespace=sprint.namespace)
    return SprintRun(sprint, memory, proposer=proposer, progress=progress, run_id=run_id).run()


def _key(violation: Violation) -> tuple:
    """What identifies a violation across runs: its focus node and its signature."""
    return (violation.focus.n3(), violation.signature)


def _sigs(violations: list) -> list:
    """The sorted signatures of some violations."""
    return sorted(x.signature for x in violations)


def _passed(results, cq_id: str) -> bool:
    """Whether the CQ with this id passed."""
    return any(r.id == cq_id and r.passed for r in results)
