"""The ablation harness: each condition streams the train tasks over its own memory and evaluates every holdout
task, with the memory frozen, before training and after every N train tasks.

Layout of DIR: `memories/<condition>-r<repeat>/` (each condition's own copy of the starting memory),
`parts/<condition>-r<repeat>.jsonl` (records as they finish; a rerun skips every record already there),
`results.jsonl`, `summary.json`, `report.html`. A holdout task runs on a throwaway copy of the memory, so
nothing it does is written to the condition's memory.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

from ..errors import ConfigError
from .records import Record, append_record, read_records, summarize, trim_torn
from .report import RESULTS, SUMMARY, build_report

CONSTRUCTION_CONDITIONS = ("A0", "A2")
MEMORY_FREE = ("A0",)


@dataclass(frozen=True)
class Job:
    """One (condition, repeat) stream of an ablation: what a worker process needs."""

    curriculum: str
    condition: str
    repeat: int
    out: str
    holdout_every: int
    start_memory: str | None = None


def schedule(train: int, every: int) -> list[tuple[str, int, int, int | None]]:
    """(phase, checkpoint, train_seen, train index) steps: holdout at 0, then after every `every` train tasks."""
    steps, cp = [("holdout", 0, 0, None)], 0
    for i in range(train):
        steps.append(("train", cp + 1, i, i))
        if (i + 1) % every == 0 or i + 1 == train:
            cp += 1
            steps.append(("holdout", cp, i + 1, None))
    return steps


def _stem(job: Job) -> str:
    """The file name stem of a job's memory and records."""
    return f"{job.condition}-r{job.repeat}"


@contextlib.contextmanager
def _memory(job: Job, frozen: bool):
    """The condition's memory (train), a throwaway copy of it (holdout), or an empty throwaway one (A0)."""
    from ..store.memory import Memory

    live = Path(job.out) / "memories" / _stem(job)
    if job.condition not in MEMORY_FREE and not frozen:
        with Memory(live) as m:
            yield m
        return
    with tempfile.TemporaryDirectory(prefix="owl-memory-holdout-") as tmp:
        if job.condition not in MEMORY_FREE:
            shutil.copytree(live, Path(tmp) / "m")
        with Memory(Path(tmp) / "m") as m:
            yield m


def _prepare(job: Job) -> None:
    """Create the condition's memory from a copy of the starting memory (once; a resumed job keeps its own)."""
    live = Path(job.out) / "memories" / _stem(job)
    if job.condition in MEMORY_FREE or live.exists():
        return
    live.parent.mkdir(parents=True, exist_ok=True)
    tmp = live.with_name(live.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    if job.start_memory:
        shutil.copytree(job.start_memory, tmp)
    else:
        tmp.mkdir()
    os.replace(tmp, live)


def run_job(job: Job, runner: Callable | None = None) -> int:
    """Stream one condition's tasks, appending a record per finished task; returns how many were run now."""
    from .construction import load_construction, run_construction

    cur = load_construction(job.curriculum)
    runner = runner or run_construction
    _prepare(job)
    part = Path(job.out) / "parts" / f"{_stem(job)}.jsonl"
    part.parent.mkdir(parents=True, exist_ok=True)
    trim_torn(part)
    done, ran = {r.key for r in read_records(part)}, 0
    for phase, cp, seen, index in schedule(len(cur.train), job.holdout_every):
        tasks = [cur.train[index]] if phase == "train" else cur.holdout
        for task in tasks:
            if (job.condition, job.repeat, phase, cp, task.id) in done:
                continue
            append_record(part, _run_one(job, runner, task, phase, cp, seen))
            ran += 1
    return ran


def _run_one(job: Job, runner: Callable, task, phase: str, cp: int, seen: int) -> Record:
    """Run one task in its phase and turn what it returns into a record."""
    t0 = time.monotonic()
    with _memory(job, frozen=phase == "holdout") as m:
        before = len(m)
        out = runner(task, m)
        items = before if phase == "holdout" else len(m)  # holdout: the frozen memory's size
    extracted = tuple(out.pop("extracted", ())) if phase == "train" and job.condition not in MEMORY_FREE else ()
    out.pop("extracted", None)
    return Record(job.condition, job.repeat, phase, cp, seen, task.id, task.split, extracted=extracted,
                  memory_items=items if job.condition not in MEMORY_FREE else 0,
                  seconds=round(time.monotonic() - t0, 3), **out)


def _jobs(curriculum, conditions, out: Path, every: int, repeats: int, start_memory) -> list[Job]:
    """One job per (condition, repeat)."""
    return [Job(str(curriculum), c, r, str(out), every, str(start_memory) if start_memory else None)
            for r in range(repeats) for c in conditions]


def _check(conditions: list[str], allowed: tuple, every: int, repeats: int) -> None:
    """ConfigError for an unknown condition or a bad count."""
    bad = [c for c in conditions if c not in allowed]
    if bad or not conditions:
        raise ConfigError(f"conditions {bad or conditions} are not among {', '.join(allowed)} for this curriculum")
    if every < 1 or repeats < 1:
        raise ConfigError("--holdout-every and --repeats must be at least 1")


def ablate(curriculum: str | Path, conditions=CONSTRUCTION_CONDITIONS, *, out: str | Path, holdout_every: int = 1,
           repeats: int = 1, memory: str | Path | None = None, parallel: bool = True) -> dict:
    """Run an ablation into `out` (resuming what is there), write results, summary and report; the summary."""
    from .construction import load_construction

    conditions = [c.strip() for c in (conditions.split(",") if isinstance(conditions, str) else conditions)]
    _check(conditions, CONSTRUCTION_CONDITIONS, holdout_every, repeats)
    cur = load_construction(curriculum)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    jobs = _jobs(curriculum, conditions, out, holdout_every, repeats, memory)
    if parallel and len(jobs) > 1:
        with ProcessPoolExecutor(min(len(jobs), os.cpu_count() or 1), mp_context=get_context("spawn")) as pool:
            list(pool.map(run_job, jobs))
    else:
        for job in jobs:
            run_job(job)
    meta = {"curriculum": cur.id, "kind": "construction", "conditions": conditions, "holdout_every": holdout_every,
            "repeats": repeats, "train_tasks": len(cur.train), "holdout_tasks": len(cur.holdout)}
    return finish(out, jobs, meta)


def finish(out: Path, jobs: list[Job], meta: dict) -> dict:
    """Merge the jobs' records into results.jsonl, write summary.json and report.html; the summary."""
    records = [r for job in jobs for r in read_records(out / "parts" / f"{_stem(job)}.jsonl")]
    tmp = out / (RESULTS + ".tmp")
    tmp.write_text("".join(json.dumps(r.to_dict(), ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    os.replace(tmp, out / RESULTS)
    summary = summarize(records, meta)
    (out / SUMMARY).write_text(json.dumps(summary, indent=1, ensure_ascii=False), encoding="utf-8")
    build_report(out)
    return summary
