"""LM curriculum tasks inside an ablation: one task run by the strict-RLM agent, learning on (train) or off (holdout).

A train task goes through the learning loop (judge, extract, consolidate or append, store with provenance); a holdout
task is the same run with learning off, judged by the same deterministic judge, so nothing is written to the
condition's memory. Every run knows its task's id and type: A1 retrieves by the type and never injects an item a
run of the same task made. A run that fails (the LM or the interpreter) is an error outcome that keeps what the run
spent (iterations, calls, tokens, cost) as its trajectory recorded it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from rdflib import Graph

from ..agent import read_trajectory, resolve_lm, run as run_agent, spent
from ..errors import OwlMemoryError
from ..learning import (
    Curriculum,
    Learning,
    Task,
    capped,
    grant_of,
    judge,
    map_endpoints,
    map_task,
    outline,
    run_learning,
)
from ..model import RunConfig, RunMetrics, RunResult
from ..model.judgments import SetScores
from ..rdfio import load_graph
from .records import TaskOutcome

if TYPE_CHECKING:
    from ..store import Memory


def make_runner(course: Curriculum, options: dict,
                consolidate: bool = True) -> Callable[[Task, Memory, bool], TaskOutcome]:
    """A harness task runner `runner(task, memory, learn) -> TaskOutcome` over an LM curriculum.

    options: RunConfig fields by name (lm, api_base, condition, layers, guide, trajectory_dir, ...); `consolidate`:
    False stores what train tasks learn append-only.
    """
    config = RunConfig.of(**options)
    config = RunConfig.of(config, lm=resolve_lm(config.lm, config.api_base, config.max_tokens, config.timeout))
    config = RunConfig.of(config, endpoints=map_endpoints(course, config.endpoints)[1])  # with example counts
    graphs = functools.cache(load_graph)  # each ontology of the curriculum loaded once, when a task first needs it

    def graph_of(task: Task) -> Graph | None:
        """The graph `task` runs over: its own ontology's, else the curriculum's (None without either)."""
        path = course.ontology_for(task)
        return graphs(path) if path is not None else None
    return functools.partial(run_task, graph_of=graph_of, config=config, consolidate=consolidate,
                             curriculum_id=course.id)


def run_task(task: Task, memory: Memory, learn: bool, *, graph_of: Callable[[Task], Graph | None], config: RunConfig,
             consolidate: bool = True, curriculum_id: str | None = None) -> TaskOutcome:
    """Run one task (learning on or off) over its own ontology and report it; a failing LM run is an error outcome
    with what it spent."""
    config, graph = replace(config, task_id=task.id, task_type=task.task_type), graph_of(task)
    task = map_task(task, config.endpoints)  # a corpus task whose target the user mapped: asked and judged there
    r: RunResult
    try:
        if learn:
            learning = Learning(task.expect, task.task_type, task.id, consolidate=consolidate,
                                curriculum_id=curriculum_id)
            r = learned = run_learning(task.query, memory, config, learning, ontology=graph)
            verdict, extracted, conflicts = learned.judgment, learned.extracted, len(learned.consolidation.conflicts)
        else:
            r = run_agent(task.query, memory, None, graph, config)
            verdict = capped(judge(task.expect, r.answer, ontology=graph, task=task.query, lm=config.lm,
                                   evidence=outline(tuple(read_trajectory(r.trajectory_path)))),
                             r.metrics, config.max_iters)
            extracted, conflicts = (), 0
    except OwlMemoryError:
        raise
    except Exception as e:  # noqa: BLE001 - the LM or interpreter failed on this task; the ablation goes on
        got = spent(e)
        failed = SetScores() if task.expect is not None and grant_of(task.expect) is not None else None
        return replace(TaskOutcome.of_run(got[0] if got else RunMetrics(), False, "error"),
                       error=f"{type(e).__name__}: {str(e)[:300]}", **_scores(failed))
    used = tuple(r.memory_ids_used)
    outcome = replace(TaskOutcome.of_run(r.metrics, bool(verdict.success), verdict.judge), memory_ids_used=used,
                      extracted=tuple(extracted), conflicts=conflicts, memory_ids_filtered=r.memory_ids_filtered,
                      exceptions_used=sum(_is_exception(memory, i) for i in used), answer_hash=r.answer_hash,
                      **_scores(verdict.scores))
    return outcome.researched(r, verdict.failure_mode, config.max_output_chars)


def _scores(scores: SetScores | None) -> dict:
    """A judgment's set scores as TaskOutcome fields (none when it has none)."""
    return scores.to_dict() if scores is not None else {}


def _is_exception(memory: Memory, id: str) -> bool:
    """True when item `id` is a scoped exception (False when it is gone from this memory)."""
    try:
        return memory.get(id).scope == "exception"
    except OwlMemoryError:
        return False
