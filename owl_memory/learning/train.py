"""Training: stream a curriculum's tasks through the learning loop and summarize what was learned, with the learned
judge rules' agreement with gold on the held-out tasks (learning/agreement.py)."""

from __future__ import annotations

from collections.abc import Callable

from ..errors import OwlMemoryError
from ..model import RunConfig
from .agreement import rule_agreement
from .consolidation import Report
from .curriculum import Curriculum, Task
from .loop import Learning, run_learning

FIGURES = tuple(Report().counts())  # the consolidation report's fields, in its order


def train_curriculum(course: Curriculum, memory, config: RunConfig, *, split: str = "train",
                     matts: str | None = None, max_extract: int | None = None, limit: int | None = None,
                     progress: Callable[[int, int, str], None] | None = None) -> dict:
    """Run each task of `split` (train | holdout | all) through the learning loop; per-task results and totals."""
    tasks = list(course.tasks if split == "all" else course.holdout if split == "holdout" else course.train)
    tasks = tasks[:limit] if limit is not None else tasks
    rows = []
    for n, task in enumerate(tasks):
        if progress is not None:
            progress(n, len(tasks), f"{task.id} ({n + 1}/{len(tasks)})")
        learning = Learning(task.expect or None, task.task_type, task.id, matts, max_extract=max_extract,
                            judge_rules=True)
        rows.append(_one(course, task, memory, config, learning))
    if progress is not None:
        progress(len(tasks), len(tasks), f"train {course.id}: done")
    return _summary(course, rows, memory)


def _one(course: Curriculum, task: Task, memory, config: RunConfig, learning: Learning) -> dict:
    """One task through the loop; a failing run or LM is recorded and training goes on."""
    try:
        r = run_learning(task.query, memory, config, learning, ontology=course.ontology_for(task))
    except OwlMemoryError:
        raise
    except Exception as e:  # noqa: BLE001 - the LM or interpreter failed on this task; the next one still runs
        return {"id": task.id, "success": None, "error": f"{type(e).__name__}: {str(e)[:200]}"}
    return {"id": task.id, "success": r.judgment.success, "answer": r.answer[:200], "run_id": r.run_id,
            "judgment": r.judgment.to_dict(), "extracted": list(r.extracted),
            "consolidation": r.consolidation.to_dict(), "figures": r.consolidation.counts(),
            "memories_used": [u.to_dict() for u in r.memory_usage], "iterations": r.metrics.iterations,
            "judge_rules": list(r.judge_rules)}


def _summary(course: Curriculum, rows: list[dict], memory) -> dict:
    """Totals over the tasks (success count, per-run consolidation figures summed, judge rules learned and their
    agreement with gold on the held-out tasks)."""
    totals = {k: sum(r.get("figures", {}).get(k, 0) for r in rows) for k in FIGURES}
    learned = sorted({i for r in rows for i in r.get("judge_rules", ())})
    return {"curriculum": course.id, "ran": len(rows), "succeeded": sum(r.get("success") is True for r in rows),
            "errors": sum("error" in r for r in rows), "consolidation": totals, "items": len(memory),
            "judge_rules": {"learned": learned, "in_training": _counted(memory, learned),
                            "agreement": rule_agreement(course, memory).to_dict()},
            "tasks": rows}


def _counted(memory, ids: list[str]) -> dict:
    """How often the learned rules have judged a gold run beside gold (in this training or an earlier one on the same
    memory), and how often they agreed with it (their use and success counters)."""
    counts = [memory.get(i).counts for i in ids]
    return {"judged": sum(c.use_count for c in counts), "agreed": sum(c.success_count for c in counts)}
