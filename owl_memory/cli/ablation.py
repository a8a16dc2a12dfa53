"""Commands of ablations: ablate and report."""

from __future__ import annotations

from pathlib import Path

import click

from ..agent.conditions import HELP as CONDITION_HELP
from .common import (
    emit,
    json_option,
    library_errors,
    lm_options,
)


@click.command("report")
@click.argument("folder", type=click.Path(file_okay=False))
@json_option
@library_errors
def ablation_report(folder, as_json):
    """Rebuild FOLDER/report.html (inline SVG plots and tables) from an ablation's results.jsonl and summary.json.

    Example: owl-memory report runs/ablation-1 && xdg-open runs/ablation-1/report.html
    """
    from ..ablation.report import build_report

    path = build_report(folder)
    emit({"report": str(path)}, as_json, lambda d: click.echo(d["report"]))

@click.command("ablate")
@click.argument("curriculum", type=click.Path(dir_okay=False))
@click.option("--conditions", default="A0,A2", show_default=True,
              help="Comma-separated conditions: " + CONDITION_HELP + ". Construction curricula: A0, A2 (A0-A4 with "
                   "--lm: a model drives the construction tools). With an experiment file (e.g. "
                   "experiments/ablation/layers.yaml): its config names (E1,E7b,...).")
@lm_options
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Output folder (resumed when it exists).")
@click.option("--holdout-every", type=int, default=1, show_default=True,
              help="Evaluate every holdout task after this many train tasks (and before the first).")
@click.option("--repeats", type=int, default=1, show_default=True, help="Repeats per condition (95% intervals).")
@click.option("--start-memory", type=click.Path(file_okay=False, exists=True),
              help="Every condition starts from its own copy of this memory (default: empty).")
@click.option("--pack", help="Memory pack (shipped name or JSONL file) imported into every condition's starting "
                             "memory (A0 has none).")
@click.option("--max-iters", type=int, default=12, show_default=True, help="LM curricula: RLM iterations per task.")
@click.option("--max-llm-calls", type=int, default=20, show_default=True,
              help="LM curricula: sub-LLM calls (llm_query from the model's code) per task.")
@click.option("--serial", is_flag=True, help="Run conditions one after another instead of in parallel processes.")
@json_option
@library_errors
def ablate_command(curriculum, conditions, lm, api_base, out, holdout_every, repeats, start_memory, pack, max_iters,
                   max_llm_calls, serial, as_json):
    """Run an ablation: every condition streams the train tasks over its own memory; holdout checkpoints freeze it.

    Writes OUT/results.jsonl, OUT/summary.json and OUT/report.html; an interrupted run resumes from OUT without
    redoing finished tasks. An LM curriculum (e.g. experiments/curricula/library.yaml) is run by the strict-RLM
    agent with --lm (train tasks through the learning loop, holdout tasks with learning off). A construction
    curriculum (`kind: construction`: sprints and repair cases) needs no LM (conditions A0, A2); with --lm a model
    runs each task through the construction tools (A0-A4; records add verify runs, deltas and undos).

    Example: owl-memory ablate experiments/curricula/library.yaml --conditions A0,A1,A2,A3,A4 --lm openai/gpt-4o-mini
    --holdout-every 4 --out runs/library

    Example: owl-memory ablate experiments/construction/curriculum.yaml --conditions A0,A2 --out runs/construction
    """
    from ..ablation.harness import ablate

    summary = ablate(curriculum, conditions, out=out, holdout_every=holdout_every, repeats=repeats,
                     memory=start_memory, parallel=not serial, lm=lm, api_base=api_base, pack=pack,
                     max_iters=max_iters, max_llm_calls=max_llm_calls)
    emit(summary, as_json, lambda s: _ablation_report(s, out))


def _ablation_report(summary: dict, out: str) -> None:
    """Print one line per condition: final holdout success, then validations (construction) or tokens and leakage."""
    for name, c in summary["conditions"].items():
        last = c["holdout"][-1] if c["holdout"] else {}
        cost = (f"validations/holdout task {c['holdout_validations_per_task']:g} (last checkpoint "
                f"{last.get('validations', 0):g})" if summary.get("kind") == "construction" else
                f"tokens/task {c['tokens_per_task']:g}, payload chars in history (mean) "
                f"{c['leakage']['payload_chars_in_history_mean']:g}")
        if summary.get("kind") == "construction" and summary.get("lm"):
            cost += (f", verify runs/holdout task {c['holdout_verify_runs_per_task']:g}, tokens/task "
                     f"{c['tokens_per_task']:g}, payload chars in history (mean) "
                     f"{c['leakage']['payload_chars_in_history_mean']:g}")
        click.echo(f"{name}: holdout success {last.get('mean', 0):.2f}, {cost}, iterations/holdout task "
                   f"{c['holdout_iterations_per_task']:g}, memory {c['memory_growth']['items_end']:g} items")
    click.echo(f"report: {Path(out) / 'report.html'}")


COMMANDS = (ablate_command, ablation_report)
