"""The agentic sprint: a model drives propose → apply → verify → repair itself through the construction tools, until
every competency question passes and the graph conforms or its step budget ends.

It is one strict-RLM run of the agent runner (agent/runner.py: trajectory, tokens, leakage) with a construction
session bound, so the run's toolbox has the construction tools over the sprint's workspace next to the memory,
ontology (the working graph) and handle tools. Afterwards it checks the result, compiles what verified
(construction/distillation.py), writes the summary beside the trajectory and, when asked, the built graph.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from ..agent import LM_ENV, SCRIPTED, lm_name, read_trajectory, resolve_lm, run as run_agent, trajectory_folder
from ..construction import (
    AgentSprintResult,
    ConstructionSession,
    RunRecord,
    Sprint,
    bound,
    check_out,
    distill,
    load_sprint,
    write_out,
)
from ..errors import OwlMemoryError
from ..model import Event, RunComplete, RunConfig, RunMetrics, RunStart
from ..rdfio import named_inside
from .construction_script import construction_lm

if TYPE_CHECKING:
    from ..store import Memory

MAX_CQS_SHOWN = 20
QUESTION_CHARS = 160
MAX_SIGNATURES = 20
TASK = """Build the ontology of sprint {name} until every competency question (CQ) passes and the working graph
conforms to the sprint's SHACL shapes. {description}
CQs:
{cqs}
Mint new nodes under {namespace}. cq_status() and cq_check(id) say what each CQ asks and whether it passes. For a
failing CQ, repair_candidates(its signature) may offer its compiled answer from memory (repair_apply(id) applies
it); otherwise write the triples it needs as Turtle with workspace_apply(added) (the prefixes of workspace_stats()
are declared for you). Then workspace_verify(); for each signature it returns call repair_candidates(signature) and
repair_apply(candidate id), or write the missing triples yourself; workspace_undo(delta) reverts a delta. SUBMIT a
one-line answer once cq_status() shows every CQ passing and workspace_verify() conforms."""


def run_agentic_sprint(sprint, memory: Memory | None, config: RunConfig | None = None, *, out=None,
                       keep_seed: bool = True, keep_values: bool = False, progress: Callable[[str], None] | None = None,
                       **options) -> AgentSprintResult:
    """Run a sprint (a Sprint or its YAML) with a model driving the construction tools; the summary.

    `config` is a RunConfig (LM, condition, budgets, trajectory folder ...) or its fields as keywords; the LM may be
    "scripted" (llm/construction_script.py). RLM iterations default to the sprint's `budget.max_steps`. The condition
    decides memory access as in `owl-memory run`: A0 no memory tools and no compiled operators, A2 memory tools and
    compiled operators through repair_candidates, A3 also a bounded hint, A4 uncapped returns. `out` gets the built
    graph (checked before anything runs). `keep_seed=False` lets a repair case remove its data's triples;
    `keep_values` makes repair replace offending values instead of dropping them.
    """
    spec = sprint if isinstance(sprint, Sprint) else load_sprint(sprint)
    check_out(out)
    if memory is not None:
        memory.require_writable()
    if config is None and "max_iters" not in options:
        options["max_iters"] = spec.max_steps
    config = RunConfig.of(config, **options)
    named = config.lm if config.lm is not None else os.environ.get(LM_ENV) or None
    lm = construction_lm() if named == SCRIPTED else resolve_lm(named, config.api_base)
    folder = named_inside(trajectory_folder(config.trajectory_dir, memory), f"sprint-{spec.name}-{_stamp()}")
    config = RunConfig.of(config, lm=lm, trajectory_dir=folder)
    session = ConstructionSession(spec, memory, use_memory=config.access.tools, keep_seed=keep_seed,
                                  keep_values=keep_values, progress=progress)
    task = task_text(spec)
    started, result, error = datetime.now(timezone.utc), None, None
    with bound(session):
        try:
            result = run_agent(task, memory, None, session.ws.working, config)
        except OwlMemoryError:
            raise
        except Exception as e:  # noqa: BLE001 - the LM or the interpreter failed: report what was built so far
            error = f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"
    return _finish(session, config, task, started, result, error, folder, out)


def task_text(spec: Sprint) -> str:
    """What the model is told: the sprint, its CQs (ids and questions, clipped), the namespace and how to work."""
    cqs = "\n".join(f"- {cq.id}: {cq.question[:QUESTION_CHARS] or '(see cq_check)'}"
                    for cq in spec.cqs[:MAX_CQS_SHOWN]) or "- (none: make the graph conform)"
    more = f"\n- … {len(spec.cqs) - MAX_CQS_SHOWN} more (cq_status lists them all)" \
        if len(spec.cqs) > MAX_CQS_SHOWN else ""
    return TASK.format(name=spec.name, description=spec.description, cqs=cqs + more, namespace=spec.namespace)


def _finish(session: ConstructionSession, config: RunConfig, task: str, started, result, error,
            folder: Path, out) -> AgentSprintResult:
    """Check the end state, compile what verified, write the summary (and the built graph); the result."""
    trajectory = next(iter(sorted(folder.glob("*.jsonl"))), folder / "missing.jsonl")
    events = read_trajectory(trajectory) if trajectory.is_file() else []
    run_id, metrics, status, trace = _run_facts(result, events, session, trajectory)
    used = tuple(dict.fromkeys([*(result.memory_ids_used if result else ()), *session.repairs.used]))
    fields = _outcome(session, session.final_view()) | dict(
        run=run_id, status=status, metrics=metrics, memory_used=used, trajectory=str(trajectory),
        summary=str(folder / "summary.json"), error=error)
    draft = AgentSprintResult(**fields, compiled_new=0, episode=None, out=None)
    record = RunRecord(run_id, lm_name(config.lm), config.condition, started, datetime.now(timezone.utc), task,
                       trace, used)
    new, episode = distill(session, record, draft.succeeded, draft.to_dict())
    done = AgentSprintResult(**fields, compiled_new=len(new), episode=episode,
                             out=write_out(session.ws, session.sprint, out))
    folder.mkdir(parents=True, exist_ok=True)
    Path(done.summary).write_text(json.dumps(done.to_dict(), indent=1, ensure_ascii=False), encoding="utf-8")
    return done


def _outcome(session: ConstructionSession, final) -> dict:
    """The result's fields that the workspace decides: CQs, conformance outside the baseline, counts, sizes."""
    mine, counts = session.baseline.mine(final.violations), session.counts
    return dict(sprint=session.sprint.name, cqs_passed=sum(r.passed for r in session.results),
                cqs_total=len(session.results), conforms=not mine, conforms_full=final.conforms,
                violations=len(mine), violation_signatures=tuple(sorted({v.signature for v in mine}))[:MAX_SIGNATURES],
                baseline=session.baseline.report(final), cqs=tuple(session.results), counts=counts,
                validations=counts.verify_runs + counts.nested_checks + 1 + session.final_checks,
                head=session.ws.head.key, versions=len(session.ws.versions),
                triples_added=len(set(session.ws.working) - set(session.ws.base)))


def _run_facts(result, events: list[Event], session: ConstructionSession, trajectory: Path) -> tuple:
    """(run id, metrics, status, trajectory blob key) of the agent's run, from its result or, when it failed, from
    what its trajectory recorded (the trajectory is then stored in memory here)."""
    end = next((e for e in reversed(events) if isinstance(e, RunComplete)), None)
    run_id = result.run_id if result is not None else next(
        (e.run_id for e in events if isinstance(e, RunStart)), f"sprint-{session.sprint.name}-{_stamp()}")
    metrics = result.metrics if result is not None else end.metrics if end is not None else RunMetrics()
    status = end.status if end is not None else "error"
    trace = result.trace_ref if result is not None else None
    if trace is None and session.memory is not None and trajectory.is_file():
        trace = session.memory.blobs.put(trajectory.read_text(encoding="utf-8"), "trace").key
    return run_id, metrics, status, trace


def _stamp() -> str:
    """A UTC timestamp for folder names, to the microsecond."""
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%f")
