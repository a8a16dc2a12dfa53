"""Judge rules learned in training, measured against gold on held-out tasks (agreement, precision, recall, coverage).

Training runs every train task of a curriculum through the learning loop (judge against gold, compile a JudgeRule
from the gold of a run that succeeded, consolidate, store with provenance). The agent is a scripted stand-in that
submits the gold's own results, so that every train run succeeds and its gold compiles: what is measured is the
rule judge, not an agent. Then the held-out tasks' gold is hidden from the rule judge and its verdicts on three
probe answers per task are compared with gold's (owl_memory/learning/agreement.py). Each line gives agreement,
coverage (all, and of trained families), the false positives (probes the rules passed and gold failed) and
`covered_untrained`: held-out questions of families with no train task that a rule bound anyway (should be 0).
Timing is reported per phase. benchmarks/data/*-reworded.yaml are curricula written for this benchmark: held-out
questions phrased as users write them.
Run: python benchmarks/judge_rules.py CURRICULUM [CURRICULUM ...] [--make "ARGS"] [--per-family N]
(--make "ARGS": a curriculum made by `owl-memory curriculum make ARGS` into a temporary file, repeatable).
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

from dspy.utils import DummyLM

from owl_memory import Memory
from owl_memory.learning.agreement import probes, rule_agreement
from owl_memory.learning.curriculum import load_curriculum
from owl_memory.learning.loop import Learning, run_learning
from owl_memory.model import RunConfig
from owl_memory.rdfio import load_graph


def oracle(answer: str) -> DummyLM:
    """A scripted agent that submits `answer` at once."""
    return DummyLM([{"reasoning": "answer", "code": f"```python\nSUBMIT(answer={answer!r})\n```"}])


def train(course, memory, folder: Path, per_family: int | None) -> dict:
    """Every train task (at most `per_family` per task type) through the loop with the oracle agent."""
    seen, learned, ran, graphs = Counter(), set(), 0, {}
    for task in course.train:
        if task.expect is None or task.expect.kind != "sparql" or (per_family and seen[task.task_type] >= per_family):
            continue
        seen[task.task_type] += 1
        path = course.ontology_for(task)
        graph = graphs.setdefault(path, load_graph(path))
        terms = {t for row in graph.query(task.expect.gold) for t in row if t is not None}
        config = RunConfig(lm=oracle(probes(terms, graph)[0]), trajectory_dir=folder)
        learning = Learning(task.expect.to_dict(), task.task_type, task.id, judge_rules=True)
        learned |= set(run_learning(task.query, memory, config, learning, ontology=path).judge_rules)
        ran += 1
    return {"train_runs": ran, "judge_rules": len(learned)}


def main(argv=None) -> int:
    """Train on each curriculum, then print the rule judge's agreement with gold on its held-out tasks."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("curricula", nargs="*", type=Path)
    ap.add_argument("--make", action="append", default=[], help='arguments of `owl-memory curriculum make` (quoted)')
    ap.add_argument("--per-family", type=int, default=None, help="train tasks per task type at most (default all)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        made = [made_curriculum(spec, Path(folder) / f"made-{n}.yaml") for n, spec in enumerate(args.make)]
        for source in [*args.curricula, *made]:
            measure(load_curriculum(source), args.per_family)
    return 0


def made_curriculum(spec: str, out: Path) -> Path:
    """The curriculum `owl-memory curriculum make SPEC` writes to `out`."""
    subprocess.run(["owl-memory", "curriculum", "make", *shlex.split(spec), "--out", str(out)], check=True,
                   stdout=subprocess.DEVNULL)
    return out


def measure(course, per_family: int | None) -> None:
    """Train on one curriculum and print its agreement figures as one JSON line."""
    with tempfile.TemporaryDirectory() as tmp, Memory(Path(tmp) / "memory") as memory:
        started = time.perf_counter()
        trained = train(course, memory, Path(tmp), per_family)
        mid = time.perf_counter()
        figures = rule_agreement(course, memory).to_dict()
        done = time.perf_counter()
    untrained = figures["covered"] - figures["covered_trained"]  # a rule bound a question of an untrained family
    print(json.dumps({"curriculum": course.id, **trained, **figures, "covered_untrained": untrained,
                      "train_seconds": round(mid - started, 1),
                      "agreement_seconds": round(done - mid, 1)}), flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
