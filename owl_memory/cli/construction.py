"""Commands of ontology construction: sprint and repair."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from .common import (
    EXIT_FAILED,
    EXIT_OK,
    Memory,
    emit,
    interruptible,
    json_option,
    library_errors,
    lm_options,
    memory_option,
)

if TYPE_CHECKING:
    from ..construction import AgentSprintResult, Sprint, SprintEvent, SprintResult
    from ..store import Memory as MemoryStore


@click.command("sprint")
@click.argument("sprint_file", required=False, type=click.Path(dir_okay=False))
@click.option("--agent", is_flag=True,
              help="The model given by --lm drives the loop itself through capped construction tools (cq_status, "
                   "workspace_apply, workspace_verify, repair_candidates, repair_apply, workspace_undo); "
                   "--lm scripted replays what memory compiled and invents nothing.")
@click.option("--out",
              help="Write the built ontology (the working graph, the input's prefixes kept) to this file: Turtle, "
                   "or the format its suffix names.")
@click.option("--max-iters", type=int,
              help="With --agent: RLM iterations at most (default: the sprint's budget.max_steps).")
@lm_options
@memory_option
@json_option
@library_errors
@interruptible(lambda memory_path, out, **_: f"sprint interrupted; {'no --out file was written; ' if out else ''}"
               f"{memory_path} keeps the graph versions and operators stored before it (answers are compiled only "
               "when a sprint succeeds); with --agent, the trajectory so far is under the memory's runs/")
def sprint(sprint_file: str | None, agent: bool, out: str | None, max_iters: int | None, lm: str | None,
           api_base: str | None, memory_path: str, as_json: bool) -> None:
    """Run an ontology construction sprint: propose, verify and repair until every CQ passes and it conforms.

    SPRINT_FILE defaults to the shipped sprint 1. Without --agent the symbolic proposer does the work (--lm adds an
    LLM proposer); with --agent --lm MODEL a model builds the ontology through the construction tools and the run
    writes a trajectory and a summary beside it (under the memory's runs/). Both compile what verified into memory.
    Exit 0 when every CQ passes and the graph conforms, 1 when not, 2 on bad input.

    Example: owl-memory sprint experiments/sprint1/sprint.yaml --memory .owl-memory --out built.ttl --json

    Example: owl-memory sprint experiments/sprint1/sprint.yaml --agent --lm openai/gpt-4o-mini --out built.ttl
    """
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn

    from ..construction import AgentSprintResult, check_out, default_sprint, load_sprint
    from ..errors import ConfigError

    if max_iters is not None and not agent:
        raise ConfigError("--max-iters bounds the agent's RLM iterations: use it with --agent")
    spec = load_sprint(sprint_file or default_sprint())
    check_out(out)  # before the memory folder is made: a refused --out leaves nothing behind
    console = Console(stderr=True)
    bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), console=console, transient=True,
                   disable=not console.is_terminal)
    with Memory(memory_path, writes=True) as m, bar:
        task = bar.add_task(f"sprint {spec.name}", total=None)

        def shown(text: str) -> None:
            """Show a progress line."""
            bar.update(task, description=text)

        result: AgentSprintResult | SprintResult
        if agent:
            result = _agentic(spec, m, lm, api_base, max_iters, out, shown)
        else:
            result = _symbolic(spec, m, lm, api_base, out, lambda event: shown(event.line()))
    if isinstance(result, AgentSprintResult):
        emit(result, as_json, _agent_report)
    else:
        emit(result, as_json, _sprint_report)
    sys.exit(EXIT_OK if result.succeeded else EXIT_FAILED)


def _symbolic(spec: Sprint, memory: MemoryStore, lm: str | None, api_base: str | None, out: str | None,
              progress: Callable[[SprintEvent], None]) -> SprintResult:
    """The symbolic sprint (with an LLM proposer when --lm is given)."""
    from ..construction import run_sprint

    proposer = None
    if lm:
        from ..agent import resolve_lm
        from ..llm import LLMProposer

        proposer = LLMProposer(resolve_lm(lm, api_base), namespace=spec.namespace)
    return run_sprint(spec, memory, proposer=proposer, progress=progress, out=out)


def _agentic(spec: Sprint, memory: MemoryStore, lm: str | None, api_base: str | None, max_iters: int | None,
             out: str | None, progress: Callable[[str], None]) -> AgentSprintResult:
    """The agentic sprint: the model drives the construction tools."""
    from ..llm import run_agentic_sprint

    options: dict[str, Any] = {"max_iters": max_iters} if max_iters else {}  # else the sprint's budget decides
    return run_agentic_sprint(spec, memory, lm=lm, api_base=api_base, out=out, progress=progress, **options)


def _sprint_report(result: SprintResult) -> None:
    """Print a sprint's outcome for people."""
    click.echo(f"sprint {result.sprint}: {result.cqs_passed}/{result.cqs_total} CQs, "
               f"conforms={result.conforms} (baseline violations excluded: {result.baseline.violations})")
    for cq in result.cqs:
        click.echo(f"  {'PASS' if cq.passed else 'FAIL'} {cq.id}")
    click.echo(f"verify iterations: {result.verify_iterations}, LM calls: {result.lm_calls}, "
               f"compiled reused: {result.compiled_reused}, compiled new: {result.compiled_new}, "
               f"triples added: {result.triples_added}" + (f" -> {result.out}" if result.out else ""))


def _agent_report(result: AgentSprintResult) -> None:
    """Print an agentic sprint's outcome for people."""
    m, n = result.metrics, result.counts
    click.echo(f"sprint {result.sprint} (agent, run {result.run}, {result.status}): "
               f"{result.cqs_passed}/{result.cqs_total} CQs, conforms={result.conforms}"
               + (f" ({result.error})" if result.error else ""))
    for cq in result.cqs:
        click.echo(f"  {'PASS' if cq.passed else 'FAIL'} {cq.id}")
    click.echo(f"verify runs: {n.verify_runs}, deltas applied: {n.deltas_applied}, undone: {n.deltas_undone}, "
               f"refused: {n.refused}, compiled used: {n.compiled_used}, compiled new: {result.compiled_new}")
    click.echo(f"LM calls: {m.lm_calls}, tokens: {m.prompt_tokens} prompt + {m.completion_tokens} "
               f"completion, payload chars in history: {m.payload_chars_in_history}")
    click.echo(f"trajectory: {result.trajectory}\nsummary: {result.summary}"
               + (f"\nbuilt: {result.out}" if result.out else ""))

@click.command("repair")
@click.argument("data", type=click.Path(exists=True, dir_okay=False))
@click.option("--shapes", required=True, type=click.Path(exists=True, dir_okay=False), help="SHACL shapes file.")
@click.option("--out", help="Write the repaired graph here (format from suffix; the input's "
                                              "prefixes and base are kept).")
@click.option("--max-rounds", type=int, default=10, show_default=True, help="Verify / patch rounds at most.")
@click.option("--keep-values", is_flag=True,
              help="Replace or complete an offending value, never drop it: a value derived from it (trimmed, "
                   "re-cased, re-typed) or a synthetic one, listed as such (the default takes the cheapest change).")
@lm_options
@memory_option
@json_option
@library_errors
@interruptible(lambda data, memory_path, out, **_: f"repair interrupted; nothing was written: {data} is unchanged"
               f"{', no --out file' if out else ''}, nothing compiled into {memory_path} (repair compiles when it "
               "finishes)")
def repair_data(data: str, shapes: str, out: str | None, max_rounds: int, keep_values: bool, lm: str | None,
                api_base: str | None, memory_path: str, as_json: bool) -> None:
    """Repair DATA until it conforms to SHAPES with deterministic operators; compile what worked into memory.

    Prints every triple added and removed, grouped by focus node and violation, each added value marked with where
    it comes from (derived from the value it replaces, from the shapes, synthetic, a new or an existing node);
    --json carries the same list. No value is ever copied from another node. With --lm, a violation no operator can
    fix is handed to the model (capped tools; its change set passes the same minimal-change rules and verification,
    and compiles like an operator's; what its runs cost and leaked is in the output's `metrics`, measured as `run`
    does); without it, no LM is used. Exit 0 when the result conforms, 1 when violations are left, 2 on bad input.
    DATA and SHAPES may be one file: shape triples are never changed. The cheapest change set that verifies wins
    (retyping a typed node or minting one costs more than one value): an optional bad value is dropped rather than
    replaced unless --keep-values is given.

    Example: owl-memory repair data.ttl --shapes shapes.ttl --memory .owl-memory --out fixed.ttl --json
    """
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn

    from ..model import sha256
    from ..rdfio import check_output, guess_format, load_graph, read_text, write_graph
    from ..repair import repair

    if out:
        check_output(out, guess_format(out))  # before anything is compiled into memory
    graph, shape_graph = load_graph(data), load_graph(shapes)
    proposer = None
    if lm:
        from ..agent import resolve_lm
        from ..llm import LLMRepairProposer

        proposer = LLMRepairProposer(resolve_lm(lm, api_base))
    run = "cli-repair-" + sha256(read_text(data) + read_text(shapes))[:12]
    console = Console(stderr=True)
    bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), console=console, transient=True,
                   disable=not console.is_terminal)
    with Memory(memory_path, writes=True) as m, bar:
        task = bar.add_task(f"repair {data} ({len(graph)} triples)", total=None)
        result = repair(graph, shape_graph, memory=m, max_rounds=max_rounds, run_id=run, proposer=proposer,
                        keep_values=keep_values, progress=lambda line: bar.update(task, description=line))
    if out:
        write_graph(result.graph, out, guess_format(out))
    cost = {"metrics": proposer.metrics.to_dict()} if proposer is not None else {}
    emit(result.to_dict() | {"out": out} | cost, as_json, _repair_report)
    sys.exit(EXIT_OK if result.conforms else EXIT_FAILED)


def _repair_report(summary: dict) -> None:
    """Print a repair for people: the outcome, then every change grouped by focus node and violation."""
    state = "conforms" if summary["conforms"] else "does NOT conform"
    n = summary["initial_violations"]
    click.echo(f"{state}: {n} violation{'' if n == 1 else 's'} found; {summary['added']} triples added and "
               f"{summary['removed']} removed; {summary['verify_iterations']} verify rounds; compiled operators "
               f"reused {summary['compiled_reused']}, new {len(summary['compiled_new'])}"
               + (f"; written to {summary['out']}" if summary["out"] else ""))
    focus = None
    for group in summary["changes"]:
        if group["focus"] != focus:
            focus = group["focus"]
            click.echo(f"\n{focus}")
        click.echo(f"  {group['violation']}  [{group['operator']}]")
        for c in group["changes"]:
            note = f"    # {c['origin']}" if c["origin"] else ""
            click.echo(f"    {c['sign']} {c['triple']} .{note}")
    for sig, why in summary["reasons"].items():
        click.echo(f"left: {sig}: {why}")
    if "metrics" in summary:
        m = summary["metrics"]
        click.echo(f"LM calls: {m['lm_calls']}, tokens: {m['prompt_tokens']} prompt + {m['completion_tokens']} "
                   f"completion, payload chars in history: {m['payload_chars_in_history']}")


COMMANDS = (sprint, repair_data)
