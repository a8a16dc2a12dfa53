"""Commands that run agents: run (a strict-RLM agent on one task), mcp (the tools over MCP) and context (what a
run's context layers would show the model)."""

from __future__ import annotations

import sys
from typing import NoReturn

import click

from ..agent import CONDITIONS, HELP as CONDITION_HELP
from ..errors import ConfigError, OwlMemoryError
from .common import (
    EXIT_FAILED,
    Memory,
    emit,
    endpoint_map_option,
    interruptible,
    json_option,
    library_errors,
    lm_limits,
    lm_options,
    memory_option,
    quota_options,
    warn_empty_gold,
)


@click.command("mcp")
@click.option("--memory", "memory_path",
              help="Memory directory or server URL for the memory_* tools (without it: no memory tools); it must "
                   "hold a memory (MemoryNotFound otherwise: a read never creates one).")
@click.option("--ontology", type=click.Path(exists=True, dir_okay=False), help="Ontology file for the ontology tools.")
@json_option
@library_errors
@interruptible(lambda **_: "mcp server stopped; nothing to keep: its tools only read the memory and the ontology")
def mcp(memory_path: str | None, ontology: str | None, as_json: bool) -> None:
    """Serve the capped tools (memory search/get/window/query, ontology tools, results_peek) over MCP on stdio.

    Example: owl-memory mcp --memory .owl-memory --ontology ontology/owl-memory.ttl
    """
    from ..mcp_server import serve

    serve(memory_path, ontology)


@click.command("run")
@click.argument("task")
@click.option("--prompt-file", type=click.Path(exists=True, dir_okay=False),
              help="Hidden prompt: the agent reads it only through capped windows.")
@click.option("--ontology", type=click.Path(exists=True, dir_okay=False), help="Ontology file for the ontology tools.")
@lm_options
@lm_limits
@click.option("--condition", type=click.Choice(list(CONDITIONS)), default="A2", show_default=True,
              help=CONDITION_HELP + ".")
@quota_options
@click.option("--max-iters", type=click.IntRange(min=1), default=12, show_default=True)
@click.option("--max-llm-calls", type=click.IntRange(min=1), default=20, show_default=True)
@click.option("--sandbox", is_flag=True, help="Run the model's code under bubblewrap: no network, no files but a "
                                               "scratch folder (needs the bubblewrap OS package).")
@click.option("--learn", is_flag=True, help="Judge the run, extract items, consolidate and store them with provenance.")
@click.option("--expect-sparql", help="Gold SELECT over --ontology: the answer's terms must equal its results.")
@click.option("--expect", "expect_answer", help="Gold answer (normalized exact match).")
@click.option("--task-type", help="Task type: A1 retrieves by it; learned items apply to it (default: general).")
@click.option("--task-id", help="Curriculum task id, for provenance; A1 never injects an item a run of it made.")
@click.option("--matts", help="Memory-aware test-time scaling: parallel:K or sequential:K (implies --learn).")
@click.option("--max-extract", type=click.IntRange(min=0), help="Items one run stores at most (default 3; MaTTS 5).")
@click.option("--layers", help="Context layers appended to the task, e.g. L0,L1,L3: L0 ontology sense card, "
                               "L1 schema constraints and anti-patterns, L3 guide summary (bounded).")
@click.option("--guide", type=click.Path(exists=True, dir_okay=False), help="Guide file that layer L3 summarizes.")
@click.option("--endpoint", "endpoints", multiple=True, metavar="URL",
              help="A SPARQL endpoint the agent may discover and query through the endpoint_* tools (repeatable); no "
                   "other host is contacted. What it learns is kept as the endpoint's EndpointProfile in --memory.")
@endpoint_map_option
@memory_option
@json_option
@library_errors
@interruptible(lambda memory_path, **_: f"run interrupted; nothing was learned or stored in {memory_path}; the "
               "trajectory so far is under the memory's runs/")
def run_task(task: str, prompt_file: str | None, ontology: str | None, lm: str | None, api_base: str | None,
             sub_lm: str | None, max_tokens: int | None, timeout: float | None, condition: str, k: str | None,
             budgets: str | None, max_iters: int, max_llm_calls: int, sandbox: bool, learn: bool,
             expect_sparql: str | None, expect_answer: str | None, task_type: str | None, task_id: str | None,
             matts: str | None, max_extract: int | None, layers: str | None, guide: str | None,
             endpoints: tuple[str, ...], endpoint_map: tuple[str, ...], memory_path: str, as_json: bool,
             max_output_chars: int | None) -> None:
    """Run a strict-RLM agent on TASK; the prompt stays behind a handle. Exit 1 when the run fails (or is judged
    wrong under --learn); a failed run under --json prints {"error", "message", "trajectory", "metrics"} on stdout.

    Without --sandbox, generated code runs in a local Python subprocess that is not a sandbox.

    Example: owl-memory run "Subclasses of om:MemoryItem?" --ontology ontology/owl-memory.ttl --lm openai/gpt-4o-mini

    Example: owl-memory run "Direct subclasses of lib:Work?" --ontology experiments/curricula/library.ttl
    --expect-sparql "SELECT ..." --learn --json --lm openai/gpt-4o-mini

    Example: owl-memory run "Which named graphs hold SKOS?" --endpoint http://127.0.0.1:7878/query --lm
    openai/gpt-4o-mini
    """
    from ..agent import interpreter_factory, resolve_lm
    from ..learning import LearnedRun, run
    from ..model import RunConfig
    from ..model.endpoints import parse_grants
    from ..model.runs import parse_layers
    from ..rdfio import read_text

    config = RunConfig(lm=resolve_lm(lm, api_base, max_tokens, timeout), api_base=api_base, condition=condition,
                       k=k, budgets=budgets, max_iters=max_iters, max_llm_calls=max_llm_calls, sandbox=sandbox,
                       layers=parse_layers(layers), guide=guide, sub_lm=sub_lm, max_tokens=max_tokens, timeout=timeout,
                       task_id=task_id, task_type=task_type, endpoints=parse_grants(endpoints + endpoint_map),
                       max_output_chars=max_output_chars or RunConfig.max_output_chars)
    interpreter_factory(sandbox)
    prompt = read_text(prompt_file) if prompt_file else None
    if expect_sparql and expect_answer:
        raise ConfigError("give --expect-sparql or --expect, not both")
    expect = {"sparql": expect_sparql} if expect_sparql else {"answer": expect_answer} if expect_answer else None
    with Memory(memory_path, writes=True) as m:
        try:
            result = run(task, m, prompt, ontology, config, learn=learn or bool(matts), expect=expect,
                         task_type=task_type, task_id=task_id, matts=matts, max_extract=max_extract)
        except OwlMemoryError:
            raise
        except Exception as e:  # the LM or the interpreter failed: the trajectory says where
            _failed(e, as_json)
    emit(result, as_json, lambda r: click.echo(f"{r.answer}\n\ntrajectory: {r.trajectory_path}"))
    if isinstance(result, LearnedRun):
        warn_empty_gold([(task_id or "this run", result.judgment)])
    if isinstance(result, LearnedRun) and not result.judgment.success:
        sys.exit(EXIT_FAILED)


def _failed(error: Exception, as_json: bool) -> NoReturn:
    """Report a run the LM or the interpreter broke (a JSON object on stdout under --json) and exit 1."""
    from ..agent import spent

    message = " ".join(f"{type(error).__name__}: {error}".split())[:300]
    got = spent(error)
    if as_json:
        emit({"error": type(error).__name__, "message": message, "trajectory": str(got[1]) if got else None,
              "metrics": got[0].to_dict() if got else None}, True)
    click.echo(f"owl-memory: run failed: {message}" + (f" (trajectory: {got[1]})" if got else ""), err=True)
    sys.exit(EXIT_FAILED)


@click.command("context")
@click.argument("ontology", type=click.Path(exists=True, dir_okay=False))
@click.option("--layers", default="L0,L1", show_default=True,
              help="Layers to show: L0 ontology sense card, L1 schema constraints and anti-patterns, L3 guide summary.")
@click.option("--guide", type=click.Path(exists=True, dir_okay=False), help="Guide file that layer L3 summarizes.")
@click.option("--task", help="A task: also show A1's injected block for it, retrieved from --memory.")
@quota_options
@click.option("--memory", "memory_path", help="Memory whose AntiPatterns L1 lists and from which --task's A1 block "
                                              "is retrieved (read only; without it: no memory items).")
@json_option
@library_errors
def context_command(ontology: str, layers: str, guide: str | None, task: str | None, k: str | None,
                    budgets: str | None, memory_path: str | None, as_json: bool) -> None:
    """Print exactly what each context layer would inject for ONTOLOGY (and A1's block for --task), with character
    counts; no model is called.

    Example: owl-memory context experiments/curricula/library.ttl --layers L0,L1
    """
    from ..agent import Layer, preview
    from ..rdfio import load_graph

    def shown(found: list[Layer]) -> None:
        for layer in found:
            click.echo(f"== {layer.name} ({layer.to_dict()['field']}): {len(layer.text)} of {layer.bound} characters"
                       + (f", {layer.dropped} left out" if layer.dropped else ""))
            click.echo(layer.text or "(empty: nothing retrieved)")

    graph = load_graph(ontology)
    if memory_path is None:
        found = preview(graph, layers, None, guide, budgets, task, k)
    else:
        with Memory(memory_path, create=False) as m:
            found = preview(graph, layers, m, guide, budgets, task, k)
    emit(found, as_json, shown)


COMMANDS = (run_task, mcp, context_command)
