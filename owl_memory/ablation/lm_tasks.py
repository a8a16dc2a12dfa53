"""LM curriculum tasks inside an ablation: one task run by the strict-RLM agent, learning on (train) or off (holdout).

A train task goes through the learning loop (judge, extract, consolidate, store); a holdout task is the same run
with learning off, judged by the same deterministic judge, so nothing is written to the condition's memory.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from ..agent.runner import resolve_lm
from ..agent.runner import run as run_agent
from ..agent.trajectory import read_trajectory
from ..errors import OwlMemoryError
from ..learning.curriculum import Curriculum, Task
from ..learning.extract import outline
from ..learning.judge import judge
from ..learning.loop import Learning, run_learning
from ..model import RunConfig
from ..rdfio import load_graph
from .records import TaskOutcome

COSTS = ("iterations", "lm_calls", "prompt_tokens", "completion_tokens", "tool_calls", "payload_chars_in_history",
         "large_returns")


def make_runner(course: Curriculum, options: dict) -> Callable:
    """A harness task runner `runner(task, memory, learn) -> TaskOutcome` over an LM curriculum.

    options: RunConfig fields by name (lm, api_base, condition, layers, guide, trajectory_dir, ...).
    """
    config = RunConfig.of(**options)
    config = RunConfig.of(config, lm=resolve_lm(config.lm, config.api_base))
    graph = load_graph(course.ontology_path) if course.ontology_path is not None else None
    return functools.partial(run_task, graph=graph, config=config)


def run_task(task: Task, memory, learn: bool, *, graph, config: RunConfig) -> TaskOutcome:
    """Run one task (learning on or off) and report it; a failing LM run is an error outcome."""
    try:
        if learn:
            r = run_learning(task.query, memory, config, Learning(task.expect or None, task.task_type, task.id),
                             ontology=graph)
            verdict, extracted, conflicts = r.judgment, r.extracted, len(r.consolidation.conflicts)
        else:
            r = run_agent(task.query, memory, None, graph, config)
            verdict = judge(task.expect or None, r.answer, ontology=graph, task=task.query, lm=config.lm,
                            evidence=outline(tuple(read_trajectory(r.trajectory_path))))
            extracted, conflicts = (), 0
    except OwlMemoryError:
        raise
    except Exception as e:  # noqa: BLE001 - the LM or interpreter failed on this task; the ablation goes on
        return TaskOutcome(False, "error", error=f"{type(e).__name__}: {str(e)[:300]}")
    used = tuple(r.memory_ids_used)
    return TaskOutcome(bool(verdict.success), verdict.judge, **{k: int(getattr(r.metrics, k)) for k in COSTS},
                       memory_ids_used=used, extracted=tuple(extracted), conflicts=conflicts,
                       exceptions_used=sum(_is_exception(memory, i) for i in used))


def _is_exception(memory, id: str) -> bool:
    """True when item `id` is a scoped exception (False when it is gone from this memory)."""
    try:
        return memory.get(id).scope == "exception"
    except OwlMemoryError:
        return False
