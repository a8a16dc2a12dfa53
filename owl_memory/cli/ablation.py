"""Commands of ablations: ablate and report."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..agent import HELP as CONDITION_HELP
from .common import (
    corpus_options,
    emit,
    endpoint_map_option,
    interruptible,
    json_option,
    library_errors,
    lm_limits,
    lm_options,
    quota_options,
)

if TYPE_CHECKING:
    from ..ablation import ConditionSummary, Estimate, Summary

@click.command("report")
@click.argument("folder")
@json_option
@library_errors
def ablation_report(folder: str, as_json: bool) -> None:
    """Rebuild FOLDER/report.html (inline SVG plots and tables) from an ablation's results.jsonl and summary.json.

    Example: owl-memory report runs/ablation-1 && xdg-open runs/ablation-1/report.html
    """
    from ..ablation import build_report

    path = build_report(folder)
    emit({"report": str(path)}, as_json, lambda d: click.echo(d["report"]))

@click.command("ablate")
@click.argument("curriculum", type=click.Path())
@click.option("--conditions", default="A0,A2", show_default=True,
              help="Comma-separated conditions: " + CONDITION_HELP + ". Construction curricula: A0, A2 (A0-A5 with "
                   "--lm: a model drives the construction tools). With an experiment file (e.g. "
                   "experiments/ablation/layers.yaml): its config names (E1,E7b,...).")
@lm_options
@lm_limits
@click.option("--out", required=True, help="Output folder (resumed when it exists).")
@click.option("--holdout-every", type=int, default=1, show_default=True,
              help="Evaluate every holdout task after this many train tasks (and before the first).")
@click.option("--repeats", type=int, default=1, show_default=True,
              help="Repeats per condition (95% intervals, pass@k for k up to the repeats).")
@click.option("--start-memory", type=click.Path(file_okay=False, exists=True),
              help="Every condition starts from its own copy of this memory (default: empty).")
@click.option("--pack", help="Memory pack (shipped name or JSONL file) imported into every condition's starting "
                             "memory (A0 has none).")
@click.option("--max-iters", type=int, default=12, show_default=True, help="LM curricula: RLM iterations per task.")
@click.option("--max-llm-calls", type=int, default=20, show_default=True,
              help="LM curricula: sub-LLM calls (llm_query from the model's code) per task.")
@quota_options
@click.option("--no-consolidate", is_flag=True, help="Store what train tasks learn append-only: no merge, no "
                                                      "conflict or exception links (E9).")
@click.option("--max-items", type=int, help="Bound every condition's memory to this many active items; the least "
                                            "useful are archived (forgetting, E11).")
@click.option("--progress/--no-progress", default=None,
              help="A status line with ETA on stderr (default: when stderr is a terminal).")
@click.option("--estimate-cost", "estimate_for", metavar="MODEL",
              help="After a --lm scripted dry run, print what the same ablation would cost with MODEL (tokens from "
                   "the dry run's prompts, litellm's local price map).")
@click.option("--serial", is_flag=True, help="Run conditions one after another instead of in parallel processes.")
@endpoint_map_option
@corpus_options
@json_option
@library_errors
@interruptible(lambda out, **_: f"ablation interrupted; the summary and report of what finished are in {out} (run the "
               "same command again to resume)")
def ablate_command(curriculum: str, conditions: str, lm: str | None, api_base: str | None, sub_lm: str | None,
                   max_tokens: int | None, timeout: float | None, out: str, holdout_every: int, repeats: int,
                   start_memory: str | None, pack: str | None, max_iters: int, max_llm_calls: int, k: str | None,
                   budgets: str | None, no_consolidate: bool, max_items: int | None, progress: bool | None,
                   estimate_for: str | None, serial: bool, endpoint_map: tuple[str, ...], language: str,
                   split_seed: int, vocabulary: str | None, as_json: bool, max_output_chars: int | None) -> None:
    """Run an ablation: every condition streams the train tasks over its own memory; holdout checkpoints freeze it.

    Writes OUT/results.jsonl, OUT/summary.json, OUT/report.html, OUT/figures/*.svg and OUT/tables/*.csv, *.tex; an
    interrupted run (Ctrl-C, SIGTERM) stops its workers, writes the summary and report of what finished (exit 130),
    and resumes from OUT without redoing finished tasks. An LM curriculum (e.g. experiments/curricula/library.yaml)
    is run by the strict-RLM agent with --lm (train tasks through the learning loop, holdout tasks with learning
    off). A construction curriculum (`kind: construction`: sprints and repair cases) needs no LM (conditions A0,
    A2); with --lm a model runs each task through the construction tools (records add verify runs, deltas, undos).
    The summary ends with the success criteria of the layer experiments whose arms it ran (met, not met, not
    measurable).

    Example: owl-memory ablate experiments/curricula/library.yaml --conditions A0,A1,A2,A3,A4,A5 --lm openai/gpt-4o-mini
    --max-tokens 1024 --timeout 120 --holdout-every 4 --out runs/library

    Example: owl-memory ablate experiments/construction/curriculum.yaml --conditions A0,A2 --out runs/construction

    Example: owl-memory ablate uniprot-examples/ --conditions A0,A2 --lm openai/gpt-4o-mini --endpoint-map
    https://sparql.uniprot.org/sparql=http://127.0.0.1:7878/query --out runs/uniprot
    """
    from ..ablation import ablate

    summary = ablate(curriculum, conditions, out=out, holdout_every=holdout_every, repeats=repeats,
                     memory=start_memory, parallel=not serial, lm=lm, api_base=api_base, pack=pack,
                     max_iters=max_iters, max_llm_calls=max_llm_calls, k=k, sub_lm=sub_lm, max_tokens=max_tokens,
                     timeout=timeout, consolidate=not no_consolidate, max_items=max_items, budgets=budgets,
                     progress=progress, endpoint_map=endpoint_map, language=language,
                     split_seed=split_seed, ontology=vocabulary, max_output_chars=max_output_chars)
    priced = None
    if estimate_for:
        from ..ablation import estimate

        priced = estimate(summary, estimate_for, max_tokens)
    extra = {"estimate": priced.to_dict()} if priced is not None else {}
    emit(summary, as_json, lambda s: _ablation_report(s, priced, out), **extra)


def _ablation_report(summary: Summary, priced: Estimate | None, out: str) -> None:
    """Print one line per condition: final holdout success, then validations (construction) or tokens and leakage;
    the success criteria; the cost estimate when one was asked for."""
    construction = summary.settings.get("kind") == "construction"
    for name, c in summary.conditions.items():
        last = c.holdout[-1] if c.holdout else None
        leaked = f"payload chars in history (mean) {c.leakage.payload_chars_in_history_mean:g}"
        cost = (f"validations/holdout task {c.holdout_validations_per_task:g} (last checkpoint "
                f"{last.validations if last else 0:g})" if construction else
                f"tokens/task {c.tokens_per_task:g}, {leaked}")
        if construction and summary.settings.get("lm"):
            cost += f", verify runs/holdout task {c.holdout_verify_runs_per_task:g}, tokens/task " \
                    f"{c.tokens_per_task:g}, {leaked}"
        scored = f", holdout set_F {last.set_F:.3f}" if last and last.set_F is not None else ""
        click.echo(f"{name}: holdout success {last.mean if last else 0:.2f}{scored}, {cost}, iterations/holdout task "
                   f"{c.holdout_iterations_per_task:g}, memory {c.memory_growth.items_end:g} items" + _run_line(c))
    for criterion in summary.criteria:
        click.echo(f"criterion {criterion.name}: {criterion.status} ({criterion.detail})")
    for line in priced.lines() if priced is not None else ():
        click.echo(line)
    click.echo(f"report: {Path(out) / 'report.html'}")


def _run_line(c: ConditionSummary) -> str:
    """Convergence, pass@k, money and sub-LM calls of one condition, when it has them."""
    parts = []
    if c.converged_rate is not None:
        parts.append(f"converged {c.converged_rate:.0%}")
    if len(c.pass_at_k) > 1:
        parts.append("pass@k " + ", ".join(f"@{k} {v:.2f}" for k, v in c.pass_at_k.items()))
    if c.cost_usd_total is None:
        parts.append("cost unknown (a model is not in litellm's price map)")
    elif c.cost_usd_total:
        parts.append(f"cost ${c.cost_usd_total:.4f}")
    if c.sub_lm_calls_per_task:
        parts.append(f"sub-LM calls/task {c.sub_lm_calls_per_task:g}")
    return "".join(f", {p}" for p in parts)


COMMANDS = (ablate_command, ablation_report)
