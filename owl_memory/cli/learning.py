"""Commands of the learning loop: train (a curriculum through the loop) and pack (export / import)."""

from __future__ import annotations

import sys

import click

from ..agent.conditions import CONDITIONS
from .common import (
    EXIT_FAILED,
    EXIT_OK,
    Memory,
    emit,
    json_option,
    library_errors,
    lm_options,
    mapping,
    memory_option,
    table,
)


@click.command("train")
@click.argument("curriculum", type=click.Path(exists=True))
@lm_options
@click.option("--split", type=click.Choice(["train", "holdout", "all"]), default="train", show_default=True)
@click.option("--condition", type=click.Choice(list(CONDITIONS)), default="A2", show_default=True)
@click.option("--max-iters", type=click.IntRange(min=1), default=12, show_default=True)
@click.option("--matts", help="parallel:K or sequential:K per task.")
@click.option("--max-extract", type=click.IntRange(min=0), help="Items one run stores at most (default 3; MaTTS 5).")
@click.option("--limit", type=click.IntRange(min=1), help="Run only the first N tasks of the split.")
@memory_option
@json_option
@library_errors
def train(curriculum, lm, api_base, split, condition, max_iters, matts, max_extract, limit, memory_path, as_json):
    """Stream a curriculum's tasks through the learning loop (run, judge, extract, consolidate, store).

    CURRICULUM is a curriculum YAML or a folder of SHACL SPARQL examples. Exit 0 when every task ran.

    Example: owl-memory train experiments/curricula/library.yaml --lm openai/gpt-4o-mini --memory .owl-memory
    """
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from ..agent.runner import resolve_lm
    from ..learning.curriculum import load_curriculum
    from ..learning.train import train_curriculum
    from ..model import RunConfig

    course, model, console = load_curriculum(curriculum), resolve_lm(lm, api_base), Console(stderr=True)
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=console,
                   disable=not console.is_terminal)
    with Memory(memory_path, writes=True) as m, bar:
        todo = bar.add_task(f"train {course.id}", total=None)
        config = RunConfig(lm=model, condition=condition, max_iters=max_iters)
        summary = train_curriculum(course, m, config, split=split, matts=matts, limit=limit, max_extract=max_extract,
                                   progress=lambda done, total, line: bar.update(todo, completed=done, total=total,
                                                                                 description=line))
    emit(summary, as_json, _train_report)
    sys.exit(EXIT_OK if not summary["errors"] else EXIT_FAILED)


def _train_report(summary: dict) -> None:
    """Print a training summary for people: one plain row per task (fits 80 columns; the judge or error last)."""
    rows = [(t["id"], {True: "yes", False: "no"}.get(t.get("success"), "error"), len(t.get("extracted", [])),
             *(t.get("figures") or dict.fromkeys(TRAIN_FIGURES, "-")).values(),
             (t.get("judgment") or {}).get("judge", t.get("error", ""))) for t in summary["tasks"]]
    table(("task", "ok", "ext", *TRAIN_FIGURES.values(), "judge"), rows, "no tasks ran")
    click.echo("ext: items extracted; consolidation: " + ", ".join(f"{short} {name}" for name, short in
                                                                   TRAIN_FIGURES.items()))
    click.echo(f"{summary['succeeded']}/{summary['ran']} succeeded; memory holds {summary['items']} items")


TRAIN_FIGURES = {"added": "add", "duplicates": "dup", "merged": "mrg", "conflicts": "conf", "exceptions": "exc",
                 "rejected": "rej", "archived": "arch"}  # a consolidation report's fields, as short column names


@click.group("pack")
def pack():
    """Export and import memory packs (JSONL, one item per line; import is idempotent).

    Example: owl-memory pack import starter --memory .owl-memory
    """


@pack.command("export")
@click.argument("out")
@click.option("--kind", help="Only items of this kind.")
@click.option("--source", type=click.Choice(["pack", "extracted", "human"]), help="Only items from this source.")
@click.option("--min-confidence", type=click.FloatRange(0, 1), default=0.0, show_default=True)
@memory_option
@json_option
@library_errors
def pack_export(out, kind, source, min_confidence, memory_path, as_json):
    """Write the memory's active items to OUT as a JSONL pack.

    Example: owl-memory pack export learned.jsonl --source extracted --min-confidence 0.6
    """
    from ..learning.packs import export_pack

    with Memory(memory_path) as m:
        n = export_pack(m, out, kind=kind, source=source, min_confidence=min_confidence)
    emit({"path": str(out), "items": n}, as_json, mapping)


@pack.command("import")
@click.argument("pack_file")
@memory_option
@json_option
@library_errors
def pack_import(pack_file, memory_path, as_json):
    """Import PACK_FILE (a JSONL path, or the name of a shipped pack such as "starter"); twice is the same as once.

    Example: owl-memory pack import starter --memory .owl-memory
    """
    from ..learning.packs import import_pack

    with Memory(memory_path, writes=True) as m:
        report = import_pack(m, pack_file)
    emit(report.to_dict(), as_json, lambda d: click.echo(f"{d['pack']}: {len(d['added'])} added, "
                                                         f"{len(d['skipped'])} skipped"))


COMMANDS = (train, pack)
