"""Construction curricula: sprints and repair cases as ablation tasks, run by the symbolic agent (no LM), or with an
LM by a model driving the construction tools (llm/agent_sprint.py; a repair case is a sprint without CQs).

YAML:
    id: construction_v1
    kind: construction
    tasks:
      - {id: sprint1, sprint: ../sprint1/sprint.yaml, split: train}          # judged by its CQs and conformance
      - {id: clinic, repair: {data: clinic.data.ttl, shapes: clinic.shapes.ttl}, split: holdout}  # by conformance
Paths are relative to the YAML file; `${OWL_MEMORY_DATA}` is expanded (benchmark curricula over shared data).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from ..errors import ConfigError, LoadError
from .records import TaskOutcome

if TYPE_CHECKING:
    from ..store import Memory

SPLITS = ("train", "holdout")


@dataclass(frozen=True)
class ConstructionTask:
    """One sprint or repair case.

    Args:
        id: unique within the curriculum.
        split: train or holdout.
        sprint: the sprint YAML (a sprint task), else None.
        data, shapes: the data and shapes files (a repair task), else None.
    """

    id: str
    split: str
    sprint: Path | None = None
    data: Path | None = None
    shapes: Path | None = None


@dataclass(frozen=True)
class ConstructionCurriculum:
    """A named list of construction tasks."""

    id: str
    tasks: tuple[ConstructionTask, ...]

    @property
    def train(self) -> list[ConstructionTask]:
        """Tasks of the train split, in order."""
        return [t for t in self.tasks if t.split == "train"]

    @property
    def holdout(self) -> list[ConstructionTask]:
        """Tasks of the holdout split, in order."""
        return [t for t in self.tasks if t.split == "holdout"]


def is_construction(path: str | Path) -> bool:
    """True when the YAML file declares `kind: construction`."""
    p = Path(path)
    if not p.is_file():
        return False
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError:
        return False
    return isinstance(data, dict) and data.get("kind") == "construction"


def _file(base: Path, value, task_id: str, source: Path) -> Path:
    """A task file resolved against the curriculum folder; LoadError when it does not exist."""
    if not isinstance(value, str) or not value:
        raise LoadError(f"task {task_id}: a file path is missing", source=str(source))
    expanded = value.replace("${OWL_MEMORY_DATA}", os.environ.get("OWL_MEMORY_DATA", "../shared/data"))
    p = (base / expanded).resolve()
    if not p.is_file():
        raise LoadError(f"task {task_id}: {value!r} does not exist (paths are relative to the curriculum; "
                        "set OWL_MEMORY_DATA for ${OWL_MEMORY_DATA})", source=str(source))
    return p


def _task(t, n: int, path: Path) -> ConstructionTask:
    """One task from parsed YAML."""
    if not isinstance(t, dict) or not t.get("id") or ("sprint" in t) == ("repair" in t):
        raise LoadError(f"task {n} needs an `id` and exactly one of `sprint` or `repair`", source=str(path))
    split = str(t.get("split") or "train")
    if split not in SPLITS:
        raise LoadError(f"task {t['id']}: split must be train or holdout, got {split!r}", source=str(path))
    if "sprint" in t:
        return ConstructionTask(str(t["id"]), split, sprint=_file(path.parent, t["sprint"], t["id"], path))
    r = t["repair"] if isinstance(t["repair"], dict) else {}
    return ConstructionTask(str(t["id"]), split, data=_file(path.parent, r.get("data"), t["id"], path),
                            shapes=_file(path.parent, r.get("shapes"), t["id"], path))


def load_construction(path: str | Path) -> ConstructionCurriculum:
    """A construction curriculum from YAML; LoadError names the file and what is wrong."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise LoadError(f"cannot read the curriculum: {str(e).splitlines()[0]}", source=str(path)) from e
    if not isinstance(data, dict) or not data.get("id") or not isinstance(data.get("tasks"), list):
        raise LoadError("a construction curriculum needs `id`, `kind: construction` and a list of `tasks`",
                        source=str(path))
    tasks = tuple(_task(t, n, path) for n, t in enumerate(data["tasks"], 1))
    ids = [t.id for t in tasks]
    if len(set(ids)) != len(ids) or not any(t.split == "holdout" for t in tasks):
        raise LoadError("task ids must be unique and at least one task must be in the holdout split",
                        source=str(path))
    return ConstructionCurriculum(str(data["id"]), tasks)


def run_construction(task: ConstructionTask, memory: Memory, options: dict | None = None) -> TaskOutcome:
    """Run one task over `memory` (a Memory; A0 passes an empty throwaway one): by the symbolic agent, or by a model
    through the construction tools when `options` (RunConfig fields by name) name an LM."""
    if options and options.get("lm") is not None:
        return _agentic(task, memory, options)
    if task.sprint is not None:
        from ..construction import run_sprint

        built = run_sprint(task.sprint, memory, run_id=f"ablation-{task.id}")
        return TaskOutcome(built.succeeded, "cq+shacl", iterations=built.verify_iterations,
                           validations=built.validations, compiled_reused=built.compiled_reused,
                           lm_calls=built.lm_calls)
    from ..repair import repair

    # value-keeping repairs, as these tasks were built and measured (a converted literal then needs a type: the
    # learned follow-up the ablation measures); the default would drop an optional bad value instead
    fixed = repair(*_case(task), memory=memory, run_id=f"ablation-{task.id}", keep_values=True)
    return TaskOutcome(fixed.conforms, "shacl", iterations=fixed.verify_iterations, validations=fixed.validations,
                       compiled_reused=fixed.compiled_reused + fixed.prevented, extracted=tuple(fixed.compiled_new))


def _case(task: ConstructionTask) -> tuple[Path, Path]:
    """A repair task's data and shapes files; ConfigError for a task that is neither a sprint nor a repair case."""
    if task.data is None or task.shapes is None:
        raise ConfigError(f"construction task {task.id} needs a sprint, or data and shapes (a repair case)")
    return task.data, task.shapes


def _agentic(task: ConstructionTask, memory: Memory, options: dict) -> TaskOutcome:
    """One task with a model driving the construction tools (a repair case keeps values, as the symbolic run does,
    and may change its data's triples); its cost, leakage, verify runs, deltas and undos recorded."""
    from ..construction import load_sprint, repair_sprint
    from ..llm import run_agentic_sprint

    case = task.sprint is None
    spec = repair_sprint(task.id, *_case(task)) if task.sprint is None else load_sprint(task.sprint)
    r = run_agentic_sprint(spec, memory, keep_seed=not case, keep_values=case, **options)
    c = r.counts
    return replace(TaskOutcome.of_run(r.metrics, r.succeeded, "shacl" if case else "cq+shacl"),
                   memory_ids_used=r.memory_used, validations=r.validations, compiled_reused=c.compiled_verified,
                   error=r.error, verify_runs=c.verify_runs, deltas=c.deltas_applied, undos=c.deltas_undone)
