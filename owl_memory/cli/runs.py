"""Commands for a person reading runs: trajectory (one run, rendered), compare (two runs side by side) and reflect
(an item from a person's hint, linked to a run) and analyze (what a memory's records say about its items)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from .common import Memory, emit, json_option, library_errors, memory_option, table

if TYPE_CHECKING:
    from ..model import Event
    from ..store import Analysis

CLIP = 300  # characters of code or output shown per iteration


@click.command("trajectory")
@click.argument("run")
@memory_option
@json_option
@library_errors
def trajectory(run: str, memory_path: str, as_json: bool) -> None:
    """Render RUN's trajectory for a person: the task and settings, each iteration's code and (capped) output, the
    tool calls and queries, memory used and noted, and how it ended. RUN is a run id (under the memory's runs/) or
    a trajectory .jsonl file.

    Example: owl-memory trajectory 20261202T101500-1a2b3c4d --memory .owl-memory
    """
    from ..agent import find_trajectory, read_trajectory

    events = read_trajectory(find_trajectory(run, memory_path))
    emit([e.to_dict() for e in events], as_json, _render)


def _render(lines: list[dict]) -> None:
    """Print a trajectory's events as plain lines."""
    from ..model import event_from_dict

    for event in (event_from_dict(d) for d in lines):
        for line in _lines(event):
            click.echo(line)


def _lines(event: Event) -> list[str]:
    """One event as lines for a person."""
    from ..model import AgentQuery, Iteration, MemoryNote, RunComplete, RunStart, ToolCall, ToolResult

    if isinstance(event, RunStart):
        c = event.config
        return [f"run {event.run_id}: {event.task}",
                f"  condition {c.condition}, lm {c.lm}, at most {c.max_iters} iterations; tools: {', '.join(c.tools)}",
                f"  memory injected: {', '.join(event.memory_ids_injected) or 'none'}"]
    if isinstance(event, Iteration):
        return [f"-- iteration {event.iteration} --", *_indented("code", event.code),
                *_indented(f"output ({event.output_chars} characters)", event.output)]
    if isinstance(event, ToolCall):
        keyword = event.args.keyword.items()
        args = [*(repr(a)[:60] for a in event.args.positional), *(f"{k}={v!r}"[:60] for k, v in keyword)]
        return [f"  tool {event.tool}({', '.join(args)})"]
    if isinstance(event, ToolResult):
        return [f"    -> {'[Error] ' + (event.message or '') if event.error else f'{event.chars} characters'}"]
    if isinstance(event, AgentQuery):
        told = f"error {event.error}" if event.error else f"ask {event.ask}" if event.ask is not None else \
            f"{event.rows} rows"
        return [f"    query on {event.source} ({event.tool}): {told}"]
    if isinstance(event, MemoryNote):
        return [f"  noted on {event.item}: {event.note}"]
    if isinstance(event, RunComplete):
        m = event.metrics
        return [f"ended {event.status}" + (f" ({event.error})" if event.error else "") + f": {event.answer}",
                f"  {m.iterations} iterations, {m.lm_calls} LM calls, {m.prompt_tokens + m.completion_tokens} tokens, "
                f"{m.tool_calls} tool calls ({m.tool_errors} errors); memory used: "
                f"{', '.join(event.memory_ids_used) or 'none'}"]
    return [f"  {event.kind}"]


def _indented(label: str, text: str) -> list[str]:
    """A labelled block, each line indented, cut to CLIP characters in all."""
    shown = text if len(text) <= CLIP else text[:CLIP - 1] + "…"
    return [f"  {label}:", *(f"    {line}" for line in shown.splitlines() or [""])]


@click.command("compare")
@click.argument("first")
@click.argument("second")
@memory_option
@json_option
@library_errors
def compare(first: str, second: str, memory_path: str, as_json: bool) -> None:
    """Put two runs side by side: task, condition, iterations, LM calls, tokens, tool calls and errors, queries,
    memory used, how each ended and its answer. Each is a run id or a trajectory .jsonl file.

    Example: owl-memory compare RUN_A RUN_B --memory .owl-memory
    """
    from ..agent import find_trajectory, read_trajectory, run_summary

    runs = [run_summary(read_trajectory(find_trajectory(r, memory_path))) for r in (first, second)]
    emit({"runs": runs}, as_json, lambda d: table(("", "first", "second"),
                                                    [(k, d["runs"][0][k], d["runs"][1][k]) for k in d["runs"][0]],
                                                    "no runs"))


@click.command("reflect")
@click.argument("run")
@click.option("--hint", required=True, help="What a person learned from the run (becomes the item's summary and "
                                            "content).")
@click.option("--kind", type=click.Choice(["Principle", "Procedure", "AntiPattern", "Constraint"]),
              default="Principle", show_default=True)
@click.option("--title", help="The item's title (1 to 10 words; default: the hint's first words).")
@memory_option
@json_option
@library_errors
def reflect(run: str, hint: str, kind: str, title: str | None, memory_path: str, as_json: bool) -> None:
    """Add an item from a person's hint about RUN: it applies where the run did (its ontology and task type) and
    its provenance links it to the run, attributed to a person (source human).

    Example: owl-memory reflect 20261202T101500-1a2b3c4d --hint "Ask for rdfs:subClassOf+ when the question says
    indirect." --memory .owl-memory
    """
    from ..agent import find_trajectory, read_trajectory
    from ..learning import reflected

    with Memory(memory_path, writes=True) as m:
        events = read_trajectory(find_trajectory(run, memory_path))
        item = m.add(reflected(events, hint, kind, title))
    emit({"id": item, "run": events[0].run_id if events else run}, as_json,
         lambda d: click.echo(f"added {d['id']} from a hint on run {d['run']}"))


@click.command("analyze")
@click.option("--stale-days", type=click.FloatRange(min=0), default=90.0, show_default=True,
              help="An item older than this that is no better than a coin (more failures than successes, or never "
                   "judged) is stale.")
@memory_option
@json_option
@library_errors
def analyze(stale_days: float, memory_path: str, as_json: bool) -> None:
    """Report what the memory's own records say about its active items: never used, always failing, conflicting
    pairs, superseded chains and stale items, each counted, with ids (the first 50).

    Example: owl-memory analyze --memory .owl-memory
    """
    from ..store import analyze as analysis

    with Memory(memory_path, create=False) as m:
        found = analysis(m, stale_days)

    def shown(a: Analysis) -> None:
        click.echo(f"{a.active} active items")
        for name in ("never_used", "always_failing", "conflicting", "superseded", "stale"):
            f = getattr(a, name)
            click.echo(f"{name.replace('_', ' ')}: {f.count}" + (f" ({', '.join(f.ids)})" if f.ids else ""))
    emit(found, as_json, shown)


COMMANDS = (trajectory, compare, reflect, analyze)
