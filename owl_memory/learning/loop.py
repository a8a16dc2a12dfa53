"""The learning loop: run -> judge -> extract -> consolidate -> store, with usage counters and PROV-O provenance.

`owl_memory.run(task, memory, ..., learn=True, expect={...})` is `run` here: one agent run (agent/runner.py, which
knows nothing of learning), wrapped in the loop when learning is asked for. MaTTS (memory-aware test-time scaling) is
an option: "parallel:K" runs K rollouts, judges each, and extracts by self-contrast, at most 5 items: successes
give Procedures; each failure's AntiPattern is written against the successes (extract.contrasted: a failure that
ran the same action as a success compiles no action, since the answer was at fault, and otherwise names the action
that succeeded instead); consolidation still flags what contradicts stored items; "sequential:K"
runs up to K refinement passes, each one given the previous pass's answer (never the judge's reason, which would
leak the gold), stopping at the first success.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rdflib import Graph

from ..agent import lm_name, read_trajectory, resolve_lm, run as run_agent
from ..errors import ConfigError
from ..model import ItemSpec, Report, RunConfig, RunResult
from ..model.judgments import EMPTY_GOLD, Expect
from ..provenance import RunInfo, provenance_graph
from ..rdfio import load_graph
from ..vocab import declared_ontology
from .consolidation import consolidate
from .extraction import MAX_ITEMS, RunRecord, compiled_action, extract, outline
from .judge_rules import RuleJudge, compile_rule, rule_spec
from .judging import Judgment, as_expect, capped, judge
from .notes import note_specs

if TYPE_CHECKING:
    from ..store import Memory

MATTS_MAX_ITEMS = 5
MATTS_MAX_K = 8


def parse_matts(matts: str | None) -> tuple[str | None, int]:
    """("parallel" | "sequential" | None, K) from "parallel:K" / "sequential:K"; ConfigError otherwise."""
    if not matts:
        return None, 1
    mode, _, k = str(matts).partition(":")
    if mode not in ("parallel", "sequential") or not k.isdigit() or not 1 <= int(k) <= MATTS_MAX_K:
        raise ConfigError(f"matts must be parallel:K or sequential:K with 1 <= K <= {MATTS_MAX_K}, got {matts!r}")
    return mode, int(k)


def extraction_cap(max_extract: int | None, mode: str | None) -> int:
    """Items one learning run stores at most: `max_extract` (default MAX_ITEMS), never above MATTS_MAX_ITEMS
    under MaTTS (default there); ConfigError when it is not an integer >= 0."""
    if max_extract is None:
        return MATTS_MAX_ITEMS if mode else MAX_ITEMS
    if isinstance(max_extract, bool) or not isinstance(max_extract, int) or max_extract < 0:
        raise ConfigError(f"max_extract must be an integer >= 0 (items stored per run), got {max_extract!r}")
    return min(max_extract, MATTS_MAX_ITEMS) if mode else max_extract


@dataclass(frozen=True)
class Learning:
    """What the loop does around one task's run.

    Args:
        expect: the gold a deterministic judge checks (an Expect, or its dict form {"sparql": SELECT}, {"answer": ...},
            ...); None (or {}): the stored judge rules that apply judge, else the LM.
        task_type: the task type learned items apply to (default "general").
        task_id: the task's id in its curriculum, for provenance.
        matts: "parallel:K" or "sequential:K" (memory-aware test-time scaling), or None for one run.
        extract_lm: an LM that drafts the items (None: rule-based extraction).
        max_extract: items one run stores at most (see extraction_cap).
        consolidate: False stores the extracted items append-only (consolidate.py; the ablation's E9).
        curriculum_id: the curriculum the task belongs to, for provenance.
        judge_rules: compile a JudgeRule item from the gold of a run that succeeded (learning/judge_rules.py;
            `owl-memory train` does). Stored rules judge runs without gold and count their agreement with gold
            either way.
    """

    expect: Expect | dict | None = None
    task_type: str | None = None
    task_id: str | None = None
    matts: str | None = None
    extract_lm: Any = None
    max_extract: int | None = None
    consolidate: bool = True
    curriculum_id: str | None = None
    judge_rules: bool = False


@dataclass(frozen=True, kw_only=True)
class LearnedRun(RunResult):
    """A run the loop judged and learned from: the best rollout's RunResult plus the judgment, the ids of the items
    this run's extraction left in memory, consolidation's report, and the JudgeRule items its gold compiled."""

    judgment: Judgment
    extracted: tuple[str, ...] = ()
    consolidation: Report = field(default_factory=Report)
    judge_rules: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        """The CLI's --json form of a run, with judgment, extracted, consolidation and judge_rules."""
        return {**super().to_dict(), "judgment": self.judgment.to_dict(), "extracted": list(self.extracted),
                "consolidation": self.consolidation.to_dict(), "judge_rules": list(self.judge_rules)}


def run(task: str, memory: Memory | None = None, prompt: str | None = None, ontology: str | Path | Graph | None = None,
        config: RunConfig | None = None, *, learn: bool = False, expect: Expect | dict | None = None,
        task_type: str | None = None, task_id: str | None = None, matts: str | None = None, extract_lm=None,
        max_extract: int | None = None, judge_rules: bool = False, **options) -> RunResult:
    """Run one strict-RLM agent on `task` (agent.runner.run; `config` a RunConfig, or its fields as keywords); with
    learn=True (or matts="parallel:K" / "sequential:K") the run goes through the learning loop and the result is a
    LearnedRun: judged (by `expect` gold, else by the stored judge rules that apply, else by the LM), items extracted,
    consolidated and stored with provenance; judge_rules=True also compiles a JudgeRule from gold that succeeded."""
    config = RunConfig.of(config, **options)
    config = replace(config, task_id=config.task_id or task_id, task_type=config.task_type or task_type)
    if not (learn or matts):
        return run_agent(task, memory, prompt, ontology, config)
    learning = Learning(expect, task_type, task_id, matts, extract_lm, max_extract, judge_rules=judge_rules)
    return run_learning(task, memory, config, learning, prompt=prompt, ontology=ontology)


def run_learning(task: str, memory: Memory | None, config: RunConfig, learning: Learning | None = None, *,
                 prompt: str | None = None, ontology: str | Path | Graph | None = None) -> LearnedRun:
    """Run, judge, extract, consolidate and store; the best rollout with its judgment and extracted ids.

    At most `learning.max_extract` items per run (see extraction_cap)."""
    if memory is None:
        raise ConfigError("learning needs a memory: pass memory=Memory(PATH) (or --memory PATH)")
    memory.require_writable()
    learning = learning or Learning()
    mode, k = parse_matts(learning.matts)
    cap = extraction_cap(learning.max_extract, mode)
    config = replace(config, lm=resolve_lm(config.lm, config.api_base, config.max_tokens, config.timeout),
                     task_id=config.task_id or learning.task_id, task_type=config.task_type or learning.task_type)
    graph = load_graph(ontology) if ontology is not None else None
    ctx = _Context(memory, task, prompt, graph, config, learning)
    try:
        judged = ctx.rollouts(mode, k)
    finally:
        ctx.rules.close()
    items: list[ItemSpec] = []
    notes: list[ItemSpec] = []
    rejected: list[str] = []
    wins = tuple(compiled_action(rec) for _, j, rec in judged if j.success) if mode == "parallel" else ()
    for _, judgment, record in judged:
        if judgment.failure_mode == EMPTY_GOLD:  # a gold that answers nothing teaches nothing either way
            rejected.append(f"nothing extracted: {judgment.reason}")
            continue
        ex = extract(record, judgment, lm=learning.extract_lm, max_items=cap, contrast=wins)
        items += [s for s in ex.items if s.id not in {i.id for i in items}]
        noted, dropped = note_specs(memory, record, judgment)  # the agent's memory_note proposals
        notes += [s for s in noted if s.id not in {i.id for i in notes}]
        rejected += [*ex.rejected, *dropped]
    report = consolidate(memory, items[:cap] + notes, Report(rejected=list(rejected)),
                         append_only=not learning.consolidate)
    rules = consolidate(memory, ctx.judge_rule_specs(judged))
    for result, judgment, _ in judged:
        memory.write_graph(provenance_graph(ctx.info(result, tuple(report.duplicates)), judgment))
    best, judgment, _ = next((r for r in judged if r[1].success), judged[-1])
    values = {f.name: getattr(best, f.name) for f in fields(RunResult)}
    return LearnedRun(**values, judgment=judgment, extracted=tuple(_stored_ids(report)), consolidation=report,
                      judge_rules=tuple(_stored_ids(rules)))


class _Context:
    """Everything one learning run shares across its rollouts."""

    def __init__(self, memory: Memory, task: str, prompt: str | None, graph: Graph | None, config: RunConfig,
                 learning: Learning):
        self.memory, self.task, self.prompt, self.graph = memory, task, prompt, graph
        self.config, self.lm, self.learning = config, config.lm, learning
        self.expect = as_expect(learning.expect)  # checked before any rollout runs
        self.times: dict[str, tuple[datetime, datetime]] = {}
        self.rules = RuleJudge(memory)

    def rollouts(self, mode: str | None, k: int) -> list[tuple[RunResult, Judgment, RunRecord]]:
        """One run, K parallel rollouts, or up to K sequential refinements (stopping at the first success)."""
        out = [self.one(self.task)]
        for _ in range(k - 1):
            if mode == "sequential" and out[-1][1].success:
                break
            out.append(self.one(self.task if mode == "parallel" else _refine(self.task, out[-1][0].answer)))
        return out

    def one(self, text: str) -> tuple[RunResult, Judgment, RunRecord]:
        """Run the agent once, judge it and count the use of every item it used."""
        started = datetime.now(timezone.utc)
        result = run_agent(text, self.memory, self.prompt, self.graph, self.config)
        self.times[result.run_id] = (started, datetime.now(timezone.utc))
        events = tuple(read_trajectory(result.trajectory_path))
        judgment = capped(self.judge(result.answer, events), result.metrics, self.config.max_iters)
        for use in result.memory_usage:
            self.memory.record_use(use.memory_id, judgment.success)
        record = RunRecord(self.task, self.learning.task_type or "general", declared_ontology(self.graph),
                           result.answer, result.run_id, result.trace_ref, events, self.graph)
        return result, judgment, record

    def judge(self, answer: str, events: tuple) -> Judgment:
        """Gold judges when there is gold (the applicable judge rules run beside it and count their agreement);
        without gold the applicable judge rules, else the LLM judge (its reason says no rule applied)."""
        task_type, iri = self.learning.task_type, declared_ontology(self.graph)
        if self.expect is not None:
            gold = judge(self.expect, answer, ontology=self.graph, task=self.task, lm=self.lm,
                         evidence=outline(events))
            if self.graph is not None:  # judge rules run over the task's ontology
                self.rules.record_agreement(self.task, answer, self.graph, task_type, iri, gold)
            return gold
        ruled = self.rules.judge(self.task, answer, self.graph, task_type, iri) if self.graph is not None else None
        if ruled is not None:
            return ruled
        fallback = judge(None, answer, ontology=self.graph, task=self.task, lm=self.lm, evidence=outline(events))
        return replace(fallback, reason=f"no judge rule applied; {fallback.reason}")

    def judge_rule_specs(self, judged: list[tuple[RunResult, Judgment, RunRecord]]) -> list[ItemSpec]:
        """The JudgeRule items the gold of the rollouts that succeeded compiles to (none without gold)."""
        wins = any(j.success for _, j, _ in judged)
        if not (self.learning.judge_rules and self.expect is not None and self.graph is not None and wins):
            return []
        rule = compile_rule(self.task, self.expect, self.graph, self.rules.reader(self.graph))
        result = next(r for r, j, _ in judged if j.success)
        return [] if rule is None else [rule_spec(rule, task_type=self.learning.task_type or "general",
                                                  ontology_iri=declared_ontology(self.graph), graph=self.graph,
                                                  run_id=result.run_id, trace_ref=result.trace_ref)]

    def info(self, result: RunResult, reextracted: tuple[str, ...] = ()) -> RunInfo:
        """The provenance record of one rollout (`reextracted`: stored items its extraction produced again)."""
        started, ended = self.times[result.run_id]
        used = tuple((u.memory_id, u.rank, u.score) for u in result.memory_usage)
        return RunInfo(result.run_id, lm_name(self.lm), self.config.condition, started, ended,
                       declared_ontology(self.graph), self.learning.task_id, self.task, result.trace_ref, used,
                       self.learning.curriculum_id, result.metrics.iterations, result.metrics.converged,
                       result.answer_hash, reextracted, result.metrics.constraint_violations)


def _refine(task: str, previous: str) -> str:
    """The task for a sequential refinement pass: the previous answer to check and improve (no judge text)."""
    return f"{task}\n\nA previous attempt answered: {previous[:500]}\nCheck that answer against the ontology and " \
           "submit a corrected, complete answer."


def _stored_ids(report: Report) -> list[str]:
    """Ids of the items this run's extraction left in memory (new, merged-away, conflicting, exceptions, known)."""
    ids = report.added + [m[1] for m in report.merged] + [c[0] for c in report.conflicts] + \
        [e[0] for e in report.exceptions] + report.duplicates
    return list(dict.fromkeys(ids))
