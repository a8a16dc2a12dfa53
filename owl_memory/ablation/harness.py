"""The ablation harness: each condition streams the train tasks over its own memory and evaluates every holdout
task, with the memory frozen, before training and after every N train tasks.

Two curriculum kinds, one harness: a construction curriculum (`kind: construction`: the symbolic agent, no LM,
conditions A0 and A2; with an LM, a model driving the construction tools, conditions A0-A4) and an LM curriculum
(learning/curriculum.py, e.g. experiments/curricula/library.yaml; the strict-RLM agent, conditions A0-A4, train
tasks through the learning loop). An experiment file
(ablation/configs.py) names an LM curriculum and arms that add context layers to a condition.

Layout of DIR: `memories/<arm>-r<repeat>/` (each arm's own copy of the starting memory, a --pack imported into
it), `parts/<arm>-r<repeat>.jsonl` (records as they finish; a rerun skips every record already there), `runs/`
(LM trajectories), `results.jsonl`, `summary.json`, `report.html`, `figures/` and `tables/`. A holdout task runs
with learning off on a throwaway copy of the memory, so nothing it does is written to the arm's memory. While a train
task runs, the arm's memory as it was before the task is kept beside it (`memories/<arm>-r<repeat>.before-<i>`); a
resume after a kill puts it back unless the task's record was written, so a rerun task never learns twice. An
ablation stopped by Ctrl-C, SIGTERM or an exception stops its workers (workers.py) and still writes the summary and
report of what finished (`status: interrupted`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from ..agent import CONDITIONS
from ..errors import ConfigError
from ..model.endpoints import parse_grants
from ..rdfio import output_folder, write_text
from .progress import Progress
from .records import Placement, Record, TaskOutcome, append_record, read_records, trim_torn
from .report import RESULTS, SUMMARY, build_report
from .spawn_guard import check_spawn_safe
from .summary import Summary, summarize
from .workers import run_all

if TYPE_CHECKING:
    from ..learning import Curriculum, Task
    from ..store import Memory
    from .construction import ConstructionCurriculum, ConstructionTask

    AnyCurriculum: TypeAlias = Curriculum | ConstructionCurriculum
    # runner(task, memory, learn): the task is a curriculum Task or a ConstructionTask, by the curriculum's kind
    Runner: TypeAlias = Callable[..., TaskOutcome]

CONSTRUCTION_CONDITIONS = ("A0", "A2")
MEMORY_FREE = ("A0",)
ACTIVE = """PREFIX om: <http://w3id.org/owl-memory#>
SELECT (COUNT(?item) AS ?n) WHERE { ?item om:contentRef ?content .
  FILTER NOT EXISTS { ?item om:archived true } FILTER NOT EXISTS { ?newer om:supersedes ?item } }"""


@dataclass(frozen=True)
class Job:
    """One (arm, repeat) stream of an ablation: what a worker process needs.

    Args:
        curriculum: the curriculum file.
        condition: the memory condition (A0-A4).
        repeat: 0-based repeat index.
        out: the ablation folder.
        holdout_every: train tasks between holdout checkpoints.
        start_memory: the memory every arm starts from a copy of (None: empty).
        kind: "construction" or "lm".
        name: the arm's name in records and file names (default: the condition).
        pack: a memory pack (name or file) imported into the arm's starting memory.
        options: keyword arguments of the task runner, as (key, value) pairs (lm, api_base, layers, guide, ...).
        consolidate: False: train tasks store their items append-only.
        max_items: the bound of the arm's memory (forgetting), None for none.
        language, split_seed: a TEXT2SPARQL questions file's question language and split seed (load_curriculum).
    """

    curriculum: str
    condition: str
    repeat: int
    out: str
    holdout_every: int
    start_memory: str | None = None
    kind: str = "construction"
    name: str = ""
    pack: str | None = None
    options: tuple[tuple[str, object], ...] = ()
    consolidate: bool = True
    max_items: int | None = None
    language: str = "en"
    split_seed: int = 0

    @property
    def arm(self) -> str:
        """The arm's name: its config name, else its condition."""
        return self.name or self.condition


def schedule(train: int, every: int) -> list[tuple[str, int, int, int | None]]:
    """(phase, checkpoint, train_seen, train index) steps: holdout at 0, then after every `every` train tasks."""
    steps: list[tuple[str, int, int, int | None]] = [("holdout", 0, 0, None)]
    cp = 0
    for i in range(train):
        steps.append(("train", cp + 1, i, i))
        if (i + 1) % every == 0 or i + 1 == train:
            cp += 1
            steps.append(("holdout", cp, i + 1, None))
    return steps


def _stem(job: Job) -> str:
    """The file name stem of a job's memory and records."""
    return f"{job.arm}-r{job.repeat}"


@contextlib.contextmanager
def _memory(job: Job, frozen: bool) -> Iterator[Memory]:
    """The arm's memory (train), or a throwaway copy of it (holdout, and every A0 task: A0's memory stays empty)."""
    from ..store import Memory

    if job.condition not in MEMORY_FREE and not frozen:
        with Memory(_live(job)) as m:
            yield m
        return
    with tempfile.TemporaryDirectory(prefix="owl-memory-holdout-") as tmp:
        shutil.copytree(_live(job), Path(tmp) / "m")
        with Memory(Path(tmp) / "m") as m:
            yield m


def _live(job: Job) -> Path:
    """The arm's own memory folder."""
    return Path(job.out) / "memories" / _stem(job)


def _backup(job: Job, index: int) -> Path:
    """Where the arm's memory is kept as it was before train task `index`."""
    live = _live(job)
    return live.with_name(f"{live.name}.before-{index}")


@contextlib.contextmanager
def _restorable(job: Job, index: int) -> Iterator[None]:
    """Keep a copy of the arm's memory while train task `index` runs and its record is written."""
    if job.condition in MEMORY_FREE:
        yield
        return
    bak = _backup(job, index)
    tmp = bak.with_name(bak.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(_live(job), tmp)
    os.replace(tmp, bak)
    yield
    shutil.rmtree(bak)


def _restore(job: Job, index: int, recorded: bool) -> None:
    """After a kill inside train task `index`: drop its backup if its record was written, else put the memory back."""
    bak = _backup(job, index)
    shutil.rmtree(bak.with_name(bak.name + ".tmp"), ignore_errors=True)
    if not bak.exists():
        return
    if recorded:
        shutil.rmtree(bak)
        return
    shutil.rmtree(_live(job), ignore_errors=True)
    os.replace(bak, _live(job))


def _prepare(job: Job) -> None:
    """Create the arm's memory once (a resumed job keeps its own): a copy of the starting memory with the pack
    imported, or an empty one for A0, which every A0 task gets a throwaway copy of (copying beats creating)."""
    from ..store import Memory

    live = _live(job)
    if live.exists():
        return
    live.parent.mkdir(parents=True, exist_ok=True)
    tmp = live.with_name(live.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    free = job.condition in MEMORY_FREE
    if job.start_memory and not free:
        shutil.copytree(job.start_memory, tmp)
    with Memory(tmp, max_items=None if free else job.max_items) as m:
        if job.pack and not free:
            from ..learning import import_pack

            import_pack(m, job.pack)
    os.replace(tmp, live)


def _load(job: Job) -> tuple[AnyCurriculum, Runner]:
    """The job's curriculum and its task runner `runner(task, memory, learn) -> TaskOutcome`."""
    if job.kind == "construction":
        from .construction import load_construction, run_construction

        agent = {"trajectory_dir": Path(job.out) / "runs" / _stem(job), **dict(job.options), "condition": job.condition}
        return load_construction(job.curriculum), lambda task, memory, learn: run_construction(task, memory, agent)
    from ..learning import load_curriculum
    from .lm_tasks import make_runner

    course = load_curriculum(job.curriculum, job.language, job.split_seed)
    runs = Path(job.out) / "runs" / _stem(job)
    runner = make_runner(course, {"trajectory_dir": runs, **dict(job.options), "condition": job.condition},
                         consolidate=job.consolidate)
    return course, runner


def run_job(job: Job, runner: Runner | None = None) -> int:
    """Stream one arm's tasks, appending a record per finished task; returns how many were run now."""
    cur, default = _load(job)
    runner = runner or default
    part = _part(job)
    part.parent.mkdir(parents=True, exist_ok=True)
    trim_torn(part)
    done, ran = {r.key for r in read_records(part)}, 0
    steps = schedule(len(cur.train), job.holdout_every)
    for phase, cp, _, index in steps:
        if index is not None:  # a train step
            _restore(job, index, (job.arm, job.repeat, phase, cp, cur.train[index].id) in done)
    _prepare(job)
    for phase, cp, seen, index in steps:
        tasks = cur.holdout if index is None else [cur.train[index]]
        for task in tasks:
            if (job.arm, job.repeat, phase, cp, task.id) in done:
                continue
            with contextlib.nullcontext() if index is None else _restorable(job, index):
                append_record(part, _run_one(job, runner, task, phase, cp, seen))
            ran += 1
    return ran


def _run_one(job: Job, runner: Runner, task: Task | ConstructionTask, phase: str, cp: int, seen: int) -> Record:
    """Run one task in its phase and turn what it reports into a record (extracted ids only when it learned)."""
    t0, learn = time.monotonic(), phase == "train" and job.condition not in MEMORY_FREE
    free = job.condition in MEMORY_FREE
    with _memory(job, frozen=phase == "holdout") as m:
        before = len(m), active_items(m)
        outcome = runner(task, m, learn)
        items = before if phase == "holdout" else (len(m), active_items(m))  # holdout: the frozen memory's size
    outcome = outcome if learn else replace(outcome, extracted=())
    return Record.of(Placement(job.arm, job.repeat, phase, cp, seen, task.id, task.split), outcome,
                     memory_items=0 if free else items[0], active_items=0 if free else items[1],
                     seconds=round(time.monotonic() - t0, 3))


def active_items(memory: Memory) -> int:
    """Items retrieval can return: neither archived (forgotten, merged away) nor superseded."""
    return int(memory.sparql(ACTIVE).rows[0][0])


def _arms(curriculum: Path, conditions, kind: str, lm=None) -> tuple[Path, list]:
    """The curriculum to run and its arms (Config objects): an experiment file's configs, else plain conditions."""
    from .configs import is_experiment, load_experiment, plain

    names = [c.strip() for c in (conditions.split(",") if isinstance(conditions, str) else conditions or ())]
    if kind == "lm" and is_experiment(curriculum):
        exp = load_experiment(curriculum)
        return exp.curriculum, exp.select(names or None)
    allowed = CONSTRUCTION_CONDITIONS if kind == "construction" and lm is None else CONDITIONS
    bad = [c for c in names if c not in allowed]
    if bad or not names:
        raise ConfigError(f"conditions {bad or names} are not among {', '.join(allowed)} for this curriculum")
    return curriculum, [plain(c) for c in names]


def _check(counts: dict[str, int], kind: str, lm) -> None:
    """ConfigError for a count below 1 (named by its option), or an LM curriculum without an LM."""
    bad = [name for name, n in counts.items() if n < 1]
    if bad:
        raise ConfigError(f"{' and '.join(bad)} must be at least 1")
    if kind == "lm" and lm is None and not os.environ.get("OWL_MEMORY_LM"):
        raise ConfigError("this curriculum is run by an LM agent: pass --lm MODEL (e.g. openai/gpt-4o-mini, with "
                          "--api-base URL for a local server) or set OWL_MEMORY_LM; construction curricula need none")


def _curriculum_meta(curriculum: Path, kind: str, language: str = "en", split_seed: int = 0) -> dict:
    """Curriculum id and task counts (LoadError when it does not load)."""
    cur: AnyCurriculum
    if kind == "construction":
        from .construction import load_construction

        cur = load_construction(curriculum)
    else:
        from ..learning import load_curriculum

        cur = load_curriculum(curriculum, language, split_seed)
    if not cur.holdout or not cur.train:
        raise ConfigError(f"curriculum {cur.id} needs train and holdout tasks (split: train | holdout)")
    return {"curriculum": cur.id, "kind": kind, "train_tasks": len(cur.train), "holdout_tasks": len(cur.holdout)}


def ablate(curriculum: str | Path, conditions=CONSTRUCTION_CONDITIONS, *, out: str | Path, holdout_every: int = 1,
           repeats: int = 1, memory: str | Path | None = None, parallel: bool = True, lm=None,
           api_base: str | None = None, pack: str | None = None, max_iters: int = 12, max_llm_calls: int = 20,
           k=None, sub_lm=None, max_tokens: int | None = None, timeout: float | None = None,
           consolidate: bool = True, max_items: int | None = None, budgets=None,
           progress: bool | None = None, endpoint_map=(), language: str = "en", split_seed: int = 0,
           max_output_chars: int | None = None) -> Summary:
    """Run an ablation into `out` (resuming what is there), write results, summary and report; the summary.

    `curriculum` is a construction curriculum (no LM: the symbolic agent, A0 and A2; with `lm`: a model driving the
    construction tools, A0-A5), an LM curriculum (A0-A5; needs `lm`, a model string, or an LM object, which runs the
    arms one after another) or an experiment file (its config names). `max_iters` (RLM iterations) and
    `max_llm_calls` (sub-LLM calls from the model's code) are the budgets of every task, the same in every
    condition; `sub_lm` serves those calls (default: the main LM); `max_tokens` and `timeout` bound every LM call.
    `k` is A1's quota (model.Quota), `consolidate=False` stores learned items append-only, `max_items` bounds every
    arm's memory, `budgets` sets layer budgets ("L0=400,L2=800"); an experiment config's own settings win.
    `progress`: a status line with ETA on stderr (None: when stderr is a terminal). `endpoint_map`: "TARGET=URL"
    entries pointing a SHACL-example corpus's schema:target endpoints at endpoints the agents may contact (a mirror, a
    local copy); mapped tasks are judged by running their reference query there. `language` and `split_seed`: a
    TEXT2SPARQL questions file's question language and split seed. `max_output_chars`: the REPL output the model
    sees per iteration (None: RunConfig's default; an experiment config's `max_output_chars` wins).

    parallel=True (the default) runs the arms in spawned processes, and a spawned process re-runs the main
    script's top level: in a script, call ablate() under `if __name__ == "__main__":` (or pass parallel=False).
    An unguarded call raises ConfigError before anything starts; `python -c`, notebooks and the CLI need no guard.
    Ctrl-C, SIGTERM or an exception stops every worker and still writes the summary and report of what finished.
    """
    from .construction import is_construction

    kind = "construction" if is_construction(curriculum) else "lm"
    _check({"--holdout-every": holdout_every, "--repeats": repeats, "--max-iters": max_iters,
            "--max-llm-calls": max_llm_calls, "--max-items": 1 if max_items is None else max_items}, kind, lm)
    path, arms = _arms(Path(curriculum), conditions, kind, lm)
    arms = [a.settled(k, consolidate, max_items, budgets, max_output_chars) for a in arms]
    meta = _curriculum_meta(path, kind, language, split_seed)
    if pack:
        from ..learning import pack_path

        pack = str(pack_path(pack))
    out = Path(out)
    symbolic = kind == "construction" and lm is None
    limits = {"max_iters": max_iters, "max_llm_calls": max_llm_calls, "sub_lm": _name(sub_lm),
              "max_tokens": max_tokens, "timeout": timeout, "max_output_chars": max_output_chars}
    options = () if symbolic else (("lm", lm), ("api_base", api_base), ("max_iters", max_iters),
                                   ("max_llm_calls", max_llm_calls), ("sub_lm", sub_lm), ("max_tokens", max_tokens),
                                   ("timeout", timeout), ("endpoints", parse_grants(endpoint_map)))
    jobs = [Job(str(path), a.condition, r, str(out), holdout_every, str(memory) if memory else None, kind,
                a.name, a.pack or pack, options + tuple((k, v) for k, v in a.run_options().items() if k != "condition"),
                a.consolidate, a.max_items, language, split_seed)
            for r in range(repeats) for a in arms]
    parallel = parallel and (lm is None or isinstance(lm, str)) and len(jobs) > 1
    if parallel:
        check_spawn_safe("owl_memory.ablate(parallel=True)")
    output_folder(out)
    meta.update({"conditions": [a.name for a in arms], "arms": [a.to_dict() for a in arms],
                 "holdout_every": holdout_every, "repeats": repeats, "pack": pack, "lm": _name(lm),
                 "planned_records": len(jobs) * planned(meta, holdout_every), **({} if symbolic else limits)})
    parts = [_part(job) for job in jobs]
    try:
        with Progress(parts, meta["planned_records"], progress):
            run_all(jobs, run_job, parallel)
    except BaseException as e:
        status = "interrupted" if isinstance(e, KeyboardInterrupt) else f"failed: {type(e).__name__}"
        with contextlib.suppress(Exception):  # the error that stopped the run is the one to report
            finish(out, jobs, {**meta, "status": status})
        raise
    return finish(out, jobs, {**meta, "status": "complete"})


def planned(meta: dict, holdout_every: int) -> int:
    """Records one (arm, repeat) job writes: every train task, and the holdout set at every checkpoint."""
    steps = schedule(meta["train_tasks"], holdout_every)
    return sum(1 if phase == "train" else meta["holdout_tasks"] for phase, *_ in steps)


def _name(lm) -> str | None:
    """An LM as the summary names it: its model string (None for none)."""
    return None if lm is None else str(getattr(lm, "model", lm))


def _part(job: Job) -> Path:
    """The file a job's records are appended to."""
    return Path(job.out) / "parts" / f"{_stem(job)}.jsonl"


def finish(out: Path, jobs: list[Job], meta: dict) -> Summary:
    """Merge the jobs' records into results.jsonl, write summary.json, report.html, figures/ and tables/; the
    summary."""
    records = [r for job in jobs for r in read_records(_part(job))]
    write_text("".join(json.dumps(r.to_dict(), ensure_ascii=False) + "\n" for r in records), out / RESULTS)
    summary = summarize(records, meta)
    write_text(json.dumps(summary.to_dict(), indent=1, ensure_ascii=False), out / SUMMARY)
    build_report(out)
    return summary
