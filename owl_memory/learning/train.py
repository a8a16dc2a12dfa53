"""Training: stream a curriculum's tasks through the learning loop and summarize what was learned, with the learned
judge rules' agreement with gold on the held-out tasks (learning/agreement.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import OwlMemoryError
from ..model import LearnedRules, RuleCounts, RunConfig, TrainedTask, TrainSummary
from .agreement import rule_agreement
from .loop import Learning, run_learning
from .tasks import Curriculum, Task

if TYPE_CHECKING:
    from ..store import Memory


def train_curriculum(course: Curriculum, memory: Memory, config: RunConfig, *, split: str = "train",
                     matts: str | None = None, max_extract: int | None = None, limit: int | None = None,
                     progress: Callable[[int, int, str], None] | None = None) -> TrainSummary:
    """Run each task of `split` (train | holdout | all) through the learning loop; per-task results and totals."""
    tasks = list(course.tasks if split == "all" else course.holdout if split == "holdout" else course.train)
    tasks = tasks[:limit] if limit is not None else tasks
    rows = []
    for n, task in enumerate(tasks):
        if progress is not None:
            progress(n, len(tasks), f"{task.id} ({n + 1}/{len(tasks)})")
        learning = Learning(task.expect, task.task_type, task.id, matts, max_extract=max_extract, judge_rules=True,
                            curriculum_id=course.id)
        rows.append(_one(course, task, memory, config, learning))
    if progress is not None:
        progress(len(tasks), len(tasks), f"train {course.id}: done")
    return _summary(course, tuple(rows), memory)


def _one(course: Curriculum, task: Task, memory: Memory, config: RunConfig, learning: Learning) -> TrainedTask:
    """One task through the loop; a failing run or LM is recorded and training goes on."""
    try:
        r = run_learning(task.query, memory, config, learning, ontology=course.ontology_for(task))
    except OwlMemoryError:
        raise
    except Exception as e:  # noqa: BLE001 - the LM or interpreter failed on this task; the next one still runs
        return TrainedTask(task.id, error=f"{type(e).__name__}: {str(e)[:200]}")
    return TrainedTask(task.id, answer=r.answer[:200], run_id=r.run_id, judgment=r.judgment, extracted=r.extracted,
                       consolidation=r.consolidation, memories_used=r.memory_usage,
                       iterations=r.metrics.iterations, judge_rules=r.judge_rules, answer_query=r.answer_query,
                       injected_ref=r.injected_ref)


def _summary(course: Curriculum, rows: tuple[TrainedTask, ...], memory: Memory) -> TrainSummary:
    """Totals over the tasks with the judge rules learned and their agreement with gold on the held-out tasks."""
    learned = tuple(sorted({i for r in rows for i in r.judge_rules}))
    rules = LearnedRules(learned, _counted(memory, learned), rule_agreement(course, memory))
    return TrainSummary(course.id, rows, len(memory), rules)


def _counted(memory: Memory, ids: tuple[str, ...]) -> RuleCounts:
    """How often the learned rules have judged a gold run beside gold (in this training or an earlier one on the same
    memory), and how often they agreed with it (their use and success counters)."""
    counts = [memory.get(i).counts for i in ids]
    return RuleCounts(sum(c.use_count for c in counts), sum(c.success_count for c in counts))
