"""Training: stream a curriculum's tasks through the learning loop and summarize what was learned."""

from __future__ import annotations

from collections.abc import Callable

from ..agent.runner import run
from ..errors import OwlMemoryError
from .curriculum import Curriculum, Task

FIGURES = ("added", "duplicates", "merged", "conflicts", "exceptions", "rejected", "archived")


def train_curriculum(course: Curriculum, memory, lm, *, split: str = "train", condition: str = "A2",
                     max_iters: int = 12, matts: str | None = None, limit: int | None = None,
                     progress: Callable[[int, int, str], None] | None = None, **run_kwargs) -> dict:
    """Run each task of `split` (train | holdout | all) with learn=True; per-task results and totals."""
    tasks = list(course.tasks if split == "all" else course.holdout if split == "holdout" else course.train)
    tasks = tasks[:limit] if limit is not None else tasks
    rows = []
    for n, task in enumerate(tasks):
        if progress is not None:
            progress(n, len(tasks), f"{task.id} ({n + 1}/{len(tasks)})")
        rows.append(_one(course, task, memory, lm, condition, max_iters, matts, run_kwargs))
    if progress is not None:
        progress(len(tasks), len(tasks), f"train {course.id}: done")
    return _summary(course, rows, memory)


def _one(course: Curriculum, task: Task, memory, lm, condition, max_iters, matts, run_kwargs) -> dict:
    """One task through the loop; a failing run or LM is recorded and training goes on."""
    try:
        r = run(task.query, memory=memory, ontology=course.ontology_path, lm=lm, condition=condition,
                max_iters=max_iters, learn=True, expect=task.expect or None, task_type=task.task_type,
                task_id=task.id, matts=matts, **run_kwargs)
    except OwlMemoryError:
        raise
    except Exception as e:  # noqa: BLE001 - the LM or interpreter failed on this task; the next one still runs
        return {"id": task.id, "success": None, "error": f"{type(e).__name__}: {str(e)[:200]}"}
    return {"id": task.id, "success": r.judgment.success, "answer": r.answer[:200], "run_id": r.run_id,
            "judgment": r.judgment.to_dict(), "extracted": r.extracted, "consolidation": r.consolidation,
            "figures": figures(r.consolidation), "memories_used": r.memory_usage,
            "iterations": r.metrics.get("iterations")}


def figures(consolidation: dict | None) -> dict:
    """The per-run consolidation figures: how many ids each field of a consolidation report holds."""
    return {k: len((consolidation or {}).get(k, [])) for k in FIGURES}


def _summary(course: Curriculum, rows: list[dict], memory) -> dict:
    """Totals over the tasks (success count, per-run consolidation figures summed)."""
    totals = {k: sum(figures(r.get("consolidation"))[k] for r in rows) for k in FIGURES}
    return {"curriculum": course.id, "ran": len(rows), "succeeded": sum(r.get("success") is True for r in rows),
            "errors": sum("error" in r for r in rows), "consolidation": totals, "items": len(memory),
            "tasks": rows}
