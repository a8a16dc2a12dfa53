"""The `owl-memory` command line: a thin layer over the library; the only module that knows the terminal."""

from __future__ import annotations

import functools
import json
import shutil
import sys
import tempfile
from pathlib import Path

import click

from .agent.conditions import CONDITIONS
from .agent.conditions import HELP as CONDITION_HELP
from .errors import ConfigError, OwlMemoryError

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
MAX_MESSAGE = 1000  # characters of an error message printed at most


def Memory(*args, **kwargs):  # noqa: N802 (stands in for the class at every call site)
    """owl_memory.Memory, imported on first use: `--help` and commands without a memory skip the store's imports."""
    from .store.memory import Memory as memory_class

    return memory_class(*args, **kwargs)


def memory_option(f):
    """Shared `--memory PATH` option."""
    return click.option("--memory", "memory_path", default=".owl-memory", show_default=True,
                        type=click.Path(file_okay=False),
                        help="Memory directory (created by commands that write) or SPARQL server URL "
                             "(http://host:port).")(f)


def json_option(f):
    """Shared `--json` option."""
    return click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")(f)


def lm_options(f):
    """Shared `--lm MODEL` and `--api-base URL` options."""
    f = click.option("--api-base", help="Base URL of an OpenAI-compatible server, e.g. http://localhost:11434/v1.")(f)
    return click.option("--lm", help="Any DSPy/litellm model string, e.g. openai/gpt-4o-mini (run: default "
                                     "$OWL_MEMORY_LM; sprint and repair: default none, symbolic only); for run, "
                                     "train and ablate also 'scripted': a fixed two-step stand-in, no model, that "
                                     "answers nothing (to try the commands).")(f)


def library_errors(f):
    """Turn owl-memory's typed errors (bad input) into one line on stderr, JSON under --json, and exit code 2.

    Any other exception is a bug and keeps its traceback (exit 1).
    """
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        try:
            return f(*args, **kwargs)
        except OwlMemoryError as e:
            fail(e, kwargs.get("as_json", False))
    return wrapper


def fail(error: OwlMemoryError, as_json: bool) -> None:
    """Print a typed error as one line on stderr (a JSON object when `as_json`) and exit 2."""
    message = " ".join(str(error).split())[:MAX_MESSAGE]
    line = json.dumps({"error": type(error).__name__, "message": message}, ensure_ascii=False) if as_json \
        else f"owl-memory: {type(error).__name__}: {message}"
    click.echo(line, err=True)
    sys.exit(EXIT_BAD_INPUT)


def emit(data, as_json: bool, render=None) -> None:
    """Print `data` (typed values as their dict form) as JSON (one line on stdout) or through `render` for people."""
    data = _plain(data)
    if as_json or render is None:
        click.echo(json.dumps(data, ensure_ascii=False, default=str))
    else:
        render(data)


def _plain(data):
    """A typed value (anything with to_dict), or a list of them, as JSON-compatible data."""
    if isinstance(data, list):
        return [_plain(x) for x in data]
    return data.to_dict() if hasattr(data, "to_dict") else data


def _items_table(items: list[dict]) -> None:
    """Print search hits as aligned columns: ids whole (paste them into `show`), titles cut to fit a terminal."""
    header = ("id", "kind", "priority", "confidence", "score", "title")
    rows = [header, *[(it["id"], it["kind"], str(it["priority"]), f"{it['confidence']:.2f}", f"{it['score']:.4f}",
                       it["title"]) for it in items]]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    room = max(20, shutil.get_terminal_size().columns - sum(widths) - 2 * len(widths)) if sys.stdout.isatty() \
        else max(len(row[5]) for row in rows)  # piped: nothing is cut
    for row in rows:
        title = row[5] if len(row[5]) <= room else row[5][: room - 1] + "…"
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(row[:5], widths, strict=True)) + "  " + title)


def _explained(out: dict) -> None:
    """Print search hits, then the defining SPARQL, its bindings and the engine that ran it."""
    _items_table(out["hits"])
    click.echo(out["sparql"])
    click.echo(f"bindings: {json.dumps(out['bindings'])}  engine: {out['engine']}")


def _mapping(data: dict) -> None:
    """Print a dict as key: value lines."""
    for key, value in data.items():
        click.echo(f"{key}: {value}")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="owl-memory")
def main():
    """Symbolic, procedural memory for LLM agents (OWL items, capped payload handles, SHACL repair).

    Example: owl-memory sprint experiments/sprint1/sprint.yaml
    """


@main.command("add")
@click.argument("kind")
@click.argument("title")
@click.argument("summary")
@click.option("--content", help="Payload text (stored behind a handle).")
@click.option("--content-file", type=click.Path(exists=True, dir_okay=False), help="Read the payload from a file.")
@click.option("--applies-to", multiple=True, help="Ontology IRI the item applies to (repeatable).")
@click.option("--task-type", multiple=True, help="Task type (repeatable).")
@click.option("--failure-mode", multiple=True, help="Failure mode it prevents (repeatable).")
@click.option("--tag", multiple=True, help="Tag (repeatable).")
@click.option("--priority", type=int, default=0, show_default=True)
@click.option("--confidence", type=float, default=0.5, show_default=True)
@click.option("--scope", type=click.Choice(["general", "exception"]), default="general", show_default=True)
@click.option("--refines", help="Id of the item this one refines (required for --scope exception).")
@memory_option
@json_option
@library_errors
def add_item(kind, title, summary, content, content_file, applies_to, task_type, failure_mode, tag, priority,
             confidence, scope, refines, memory_path, as_json):
    """Validate and store one memory item; prints its id.

    Example: owl-memory add Principle "Bind values, never paste" "Use when a query takes user text." --content "..."
    """
    if (content is None) == (content_file is None):
        raise click.UsageError("give exactly one of --content or --content-file")
    from .model import ItemSpec
    from .rdfio import read_text

    text = content if content is not None else read_text(content_file)
    spec = ItemSpec(kind, title, summary, text, applies_to=applies_to, task_types=task_type,
                    failure_modes=failure_mode, tags=tag, priority=priority, confidence=confidence, scope=scope,
                    refines=refines)  # malformed fields fail here, before a memory is opened or created
    fresh = not Path(memory_path).exists()
    try:
        with Memory(memory_path) as m:
            i = m.add(spec)
    except OwlMemoryError:
        if fresh:  # a refused first item leaves no memory behind (bad input writes nothing)
            shutil.rmtree(memory_path, ignore_errors=True)
        raise
    emit({"id": i}, as_json, lambda d: click.echo(d["id"]))


@main.command("search")
@click.argument("text", required=False)
@click.option("--ontology", help="Only items that apply to this ontology IRI.")
@click.option("--task-type", help="Only items for this task type.")
@click.option("--failure-mode", help="Only items that prevent this failure mode.")
@click.option("--kind", "kinds", multiple=True, help="Only these kinds (repeatable).")
@click.option("-k", "--limit", "k", type=int, default=5, show_default=True, help="How many items at most.")
@click.option("--explain", is_flag=True, help="Also show the SPARQL SELECT that defines the result, and its bindings.")
@memory_option
@json_option
@library_errors
def search_items(text, ontology, task_type, failure_mode, kinds, k, explain, memory_path, as_json):
    """Search memory: ids and metadata of applicable items, best first.

    Example: owl-memory search "bind values" --ontology http://purl.org/dc/terms/ --json
    """
    with Memory(memory_path, create=False) as m:
        out = (m.explain if explain else m.search)(text, ontology=ontology, task_type=task_type,
                                                    failure_mode=failure_mode, kinds=kinds or None, k=k)
    emit(out, as_json, _explained if explain else _items_table)


@main.command("sparql")
@click.argument("query")
@click.option("--bind", "binds", multiple=True, metavar="NAME=VALUE",
              help="Bind ?NAME: <iri> for an IRI, anything else as a literal (repeatable).")
@click.option("--limit", type=int, default=1000, show_default=True, help="Rows at most (1000 is the cap).")
@memory_option
@json_option
@library_errors
def sparql_query(query, binds, limit, memory_path, as_json):
    """Ask a read-only SPARQL SELECT or ASK of the memory graph (items, links, provenance; never payload text).

    Example: owl-memory sparql 'PREFIX om: <http://w3id.org/owl-memory#> SELECT ?i ?t WHERE { ?i om:title ?t }'
    """
    with Memory(memory_path, create=False) as m:
        out = m.sparql(query, dict(_binding(b) for b in binds), limit=limit)
    emit(out, as_json, _rows_table)


def _binding(text: str) -> tuple[str, object]:
    """NAME=VALUE from --bind: <iri> becomes an IRI, anything else a literal."""
    name, sep, value = text.partition("=")
    if not sep:
        raise click.UsageError(f"--bind takes NAME=VALUE, got {text[:40]!r}")
    from rdflib import URIRef

    return name, URIRef(value[1:-1]) if value.startswith("<") and value.endswith(">") else value


def _rows_table(out: dict) -> None:
    """Print SPARQL rows as tab-separated lines under a header (and say when they were cut at the limit)."""
    for row in [out["columns"], *out["rows"]]:
        click.echo("\t".join("" if v is None else str(v) for v in row))
    if out["truncated"]:
        click.echo(f"(first {len(out['rows'])} rows; more exist: narrow the query or raise --limit)")


@main.command("show")
@click.argument("item_id")
@memory_option
@json_option
@library_errors
def show_item(item_id, memory_path, as_json):
    """Show an item's metadata, links, counters and compiled fields (never its payload).

    Example: owl-memory show 3f275e45e0a9e84e
    """
    with Memory(memory_path, create=False) as m:
        emit(m.get(item_id), as_json, _mapping)


@main.command("window")
@click.argument("item_id")
@click.option("--start", type=int, default=0, show_default=True)
@click.option("--length", type=int, default=512, show_default=True, help="Capped at the memory's max read.")
@memory_option
@json_option
@library_errors
def window_item(item_id, start, length, memory_path, as_json):
    """Print a capped window of an item's payload.

    Example: owl-memory window 3f275e45e0a9e84e --start 0 --length 200
    """
    with Memory(memory_path, create=False) as m:
        emit(m.window(item_id, start, length), as_json, lambda d: click.echo(d["text"]))


@main.command("export")
@click.argument("path", type=click.Path())
@click.option("--format", "fmt", default="turtle", show_default=True, help="rdflib serializer name.")
@memory_option
@json_option
@library_errors
def export_memory(path, fmt, memory_path, as_json):
    """Validate the memory against its shapes and write it as RDF.

    Example: owl-memory export memory.ttl
    """
    with Memory(memory_path, create=False) as m:
        out = m.export(path, format=fmt)
    emit({"path": str(out)}, as_json, lambda d: click.echo(d["path"]))


@main.command("validate")
@memory_option
@json_option
@library_errors
def validate_memory(memory_path, as_json):
    """Validate every item against shapes/owl-memory-shapes.ttl; exit 1 when it does not conform.

    Example: owl-memory validate --json
    """
    with Memory(memory_path, create=False) as m:
        result = m.validate()
    emit(result, as_json, _mapping)
    sys.exit(EXIT_OK if result.conforms else EXIT_FAILED)


@main.command("demo")
@click.option("--memory", "memory_path", type=click.Path(file_okay=False),
              help="Memory directory to build and keep (default: a temporary one, removed on exit).")
@json_option
@library_errors
def demo(memory_path, as_json):
    """Build a memory about DC Terms (shipped inside owlready2), add items, search, print.

    Example: owl-memory demo
    """
    from .demo import run_demo

    if memory_path:
        emit({**run_demo(Path(memory_path)), "kept": True}, as_json, _demo_report)
        return
    with tempfile.TemporaryDirectory(prefix="owl-memory-demo-") as tmp:  # removed on the way out, error or not
        emit({**run_demo(Path(tmp) / "memory"), "kept": False}, as_json, _demo_report)


def _demo_report(result: dict) -> None:
    """Print what the demo built and found."""
    kept = "" if result["kept"] else "; a temporary memory, removed on exit: pass --memory DIR to keep one"
    click.echo(f"memory: {result['memory']} ({result['items']} items from {result['ontology']}{kept})")
    for query, hits in result["searches"].items():
        click.echo(f"\nsearch {query}")
        _items_table(hits)
    click.echo(f"\nwindow of {result['window']['id']}: {result['window']['text']!r}")


@main.command("mcp")
@click.option("--memory", "memory_path", type=click.Path(file_okay=False),
              help="Memory directory or server URL for the memory_* tools (without it: no memory tools).")
@click.option("--ontology", type=click.Path(exists=True, dir_okay=False), help="Ontology file for the ontology tools.")
@library_errors
def mcp(memory_path, ontology):
    """Serve the capped tools (memory search/get/window/query, ontology tools, results_peek) over MCP on stdio.

    Example: owl-memory mcp --memory .owl-memory --ontology ontology/owl-memory.ttl
    """
    from .agent.mcp_server import serve

    serve(memory_path, ontology)


@main.command("run")
@click.argument("task")
@click.option("--prompt-file", type=click.Path(exists=True, dir_okay=False),
              help="Hidden prompt: the agent reads it only through capped windows.")
@click.option("--ontology", type=click.Path(exists=True, dir_okay=False), help="Ontology file for the ontology tools.")
@lm_options
@click.option("--condition", type=click.Choice(list(CONDITIONS)), default="A2", show_default=True,
              help=CONDITION_HELP + ".")
@click.option("--max-iters", type=int, default=12, show_default=True)
@click.option("--max-llm-calls", type=int, default=20, show_default=True)
@click.option("--sandbox", is_flag=True, help="Run the model's code under bubblewrap: no network, no files but a "
                                               "scratch folder (needs the bubblewrap OS package).")
@click.option("--learn", is_flag=True, help="Judge the run, extract items, consolidate and store them with provenance.")
@click.option("--expect-sparql", help="Gold SELECT over --ontology: the answer's terms must equal its results.")
@click.option("--expect", "expect_answer", help="Gold answer (normalized exact match).")
@click.option("--task-type", help="Task type the learned items apply to (default: general).")
@click.option("--matts", help="Memory-aware test-time scaling: parallel:K or sequential:K (implies --learn).")
@click.option("--max-extract", type=click.IntRange(min=0), help="Items one run stores at most (default 3; MaTTS 5).")
@click.option("--layers", help="Context layers appended to the task, e.g. L0,L1,L3: L0 ontology sense card, "
                               "L1 schema constraints and anti-patterns, L3 guide summary (bounded).")
@click.option("--guide", type=click.Path(exists=True, dir_okay=False), help="Guide file that layer L3 summarizes.")
@memory_option
@json_option
@library_errors
def run_task(task, prompt_file, ontology, lm, api_base, condition, max_iters, max_llm_calls, sandbox, learn,
             expect_sparql, expect_answer, task_type, matts, max_extract, layers, guide, memory_path, as_json):
    """Run a strict-RLM agent on TASK; the prompt stays behind a handle. Exit 1 when the run fails (or is judged
    wrong under --learn).

    Without --sandbox, generated code runs in a local Python subprocess that is not a sandbox.

    Example: owl-memory run "Subclasses of om:MemoryItem?" --ontology ontology/owl-memory.ttl --lm openai/gpt-4o-mini

    Example: owl-memory run "Direct subclasses of lib:Work?" --ontology experiments/curricula/library.ttl
    --expect-sparql "SELECT ..." --learn --json --lm openai/gpt-4o-mini
    """
    from .agent.runner import interpreter_factory, resolve_lm, run
    from .rdfio import read_text

    model, prompt = resolve_lm(lm, api_base), None
    interpreter_factory(sandbox)
    if prompt_file:
        prompt = read_text(prompt_file)
    if expect_sparql and expect_answer:
        raise ConfigError("give --expect-sparql or --expect, not both")
    expect = {"sparql": expect_sparql} if expect_sparql else {"answer": expect_answer} if expect_answer else None
    with Memory(memory_path) as m:
        try:
            result = run(task, memory=m, prompt=prompt, ontology=ontology, lm=model, condition=condition,
                         max_iters=max_iters, max_llm_calls=max_llm_calls, sandbox=sandbox,
                         learn=learn or bool(matts), expect=expect, task_type=task_type, matts=matts,
                         max_extract=max_extract, layers=layers, guide=guide)
        except OwlMemoryError:
            raise
        except Exception as e:  # the LM or the interpreter failed: the trajectory says where
            click.echo(f"owl-memory: run failed: {type(e).__name__}: {str(e)[:300]}", err=True)
            sys.exit(EXIT_FAILED)
    out = run_json(result)
    emit(out, as_json, lambda d: click.echo(f"{d['answer']}\n\ntrajectory: {d['trajectory']}"))
    if result.judgment is not None and not result.judgment.success:
        sys.exit(EXIT_FAILED)


def run_json(result) -> dict:
    """Seed 003's subagent JSON for a run (plus judgment, extracted and consolidation when it learned)."""
    out = {"answer": result.answer, "iterations": result.metrics.get("iterations"), "run_id": result.run_id,
           "trajectory_id": result.trace_ref, "log_path": str(result.trajectory_path),
           "memories_used": result.memory_usage, "trajectory": str(result.trajectory_path),
           "memory_ids_used": result.memory_ids_used, "metrics": result.metrics}
    if result.judgment is not None:
        out.update(judgment=result.judgment.to_dict(), extracted=result.extracted,
                   consolidation=result.consolidation)
    return out


@main.command("train")
@click.argument("curriculum", type=click.Path(exists=True))
@lm_options
@click.option("--split", type=click.Choice(["train", "holdout", "all"]), default="train", show_default=True)
@click.option("--condition", type=click.Choice(list(CONDITIONS)), default="A2", show_default=True)
@click.option("--max-iters", type=int, default=12, show_default=True)
@click.option("--matts", help="parallel:K or sequential:K per task.")
@click.option("--max-extract", type=click.IntRange(min=0), help="Items one run stores at most (default 3; MaTTS 5).")
@click.option("--limit", type=int, help="Run only the first N tasks of the split.")
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

    from .agent.runner import resolve_lm
    from .learning.curriculum import load_curriculum
    from .learning.train import train_curriculum

    course, model, console = load_curriculum(curriculum), resolve_lm(lm, api_base), Console(stderr=True)
    with Memory(memory_path) as m, Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                            console=console, disable=not console.is_terminal) as bar:
        todo = bar.add_task(f"train {course.id}", total=None)
        summary = train_curriculum(course, m, model, split=split, condition=condition, max_iters=max_iters,
                                   matts=matts, limit=limit, max_extract=max_extract,
                                   progress=lambda done, total, line: bar.update(todo, completed=done, total=total,
                                                                                 description=line))
    emit(summary, as_json, _train_report)
    sys.exit(EXIT_OK if not summary["errors"] else EXIT_FAILED)


def _train_report(summary: dict) -> None:
    """Print a training summary for people."""
    from rich.console import Console
    from rich.table import Table

    table = Table("task", "success", "judge", "extracted", "added", "dup", "merged", "conflicts", "exceptions",
                  "rejected", "archived")
    for t in summary["tasks"]:
        figures = (str(n) for n in (t.get("figures") or {}).values())
        table.add_row(t["id"], str(t.get("success")), (t.get("judgment") or {}).get("judge", t.get("error", "")),
                      str(len(t.get("extracted", []))), *figures)
    Console().print(table)
    click.echo(f"{summary['succeeded']}/{summary['ran']} succeeded; memory holds {summary['items']} items")


@main.group("pack")
def pack():
    """Export and import memory packs (JSONL, one item per line; import is idempotent).

    Example: owl-memory pack import starter --memory .owl-memory
    """


@pack.command("export")
@click.argument("out", type=click.Path(dir_okay=False))
@click.option("--kind", help="Only items of this kind.")
@click.option("--source", type=click.Choice(["pack", "extracted", "human"]), help="Only items from this source.")
@click.option("--min-confidence", type=float, default=0.0, show_default=True)
@memory_option
@json_option
@library_errors
def pack_export(out, kind, source, min_confidence, memory_path, as_json):
    """Write the memory's active items to OUT as a JSONL pack.

    Example: owl-memory pack export learned.jsonl --source extracted --min-confidence 0.6
    """
    from .learning.packs import export_pack

    with Memory(memory_path) as m:
        n = export_pack(m, out, kind=kind, source=source, min_confidence=min_confidence)
    emit({"path": str(out), "items": n}, as_json, _mapping)


@pack.command("import")
@click.argument("pack_file")
@memory_option
@json_option
@library_errors
def pack_import(pack_file, memory_path, as_json):
    """Import PACK_FILE (a JSONL path, or the name of a shipped pack such as "starter"); twice is the same as once.

    Example: owl-memory pack import starter --memory .owl-memory
    """
    from .learning.packs import import_pack

    with Memory(memory_path) as m:
        report = import_pack(m, pack_file)
    emit(report.to_dict(), as_json, lambda d: click.echo(f"{d['pack']}: {len(d['added'])} added, "
                                                         f"{len(d['skipped'])} skipped"))


@main.command("sprint")
@click.argument("sprint_file", required=False, type=click.Path(dir_okay=False))
@lm_options
@memory_option
@json_option
@library_errors
def sprint(sprint_file, lm, api_base, memory_path, as_json):
    """Run an ontology construction sprint: propose, verify and repair until every CQ passes and it conforms.

    SPRINT_FILE defaults to the shipped sprint 1. Exit 0 when every CQ passes and the graph conforms, 1 when not.

    Example: owl-memory sprint experiments/sprint1/sprint.yaml --memory .owl-memory --json
    """
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn

    from .construction.sprint import default_sprint, load_sprint, run_sprint

    spec = load_sprint(sprint_file or default_sprint())
    model = None
    if lm:
        from .agent.runner import resolve_lm

        model = resolve_lm(lm, api_base)
    console = Console(stderr=True)
    with Memory(memory_path) as m, Progress(SpinnerColumn(), TextColumn("{task.description}"), console=console,
                                            transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task(f"sprint {spec.name}", total=None)
        result = run_sprint(spec, m, lm=model,
                            progress=lambda event, info: bar.update(task, description=_sprint_line(event, info)))
    emit(result, as_json, _sprint_report)
    sys.exit(EXIT_OK if result["cqs_passed"] == result["cqs_total"] and result["conforms"] else EXIT_FAILED)


def _sprint_line(event: str, info: dict) -> str:
    """One progress line for a sprint event."""
    return f"{event}: " + ", ".join(f"{k}={v}" for k, v in info.items())


def _sprint_report(result: dict) -> None:
    """Print a sprint's outcome for people."""
    click.echo(f"sprint {result['sprint']}: {result['cqs_passed']}/{result['cqs_total']} CQs, "
               f"conforms={result['conforms']} (baseline violations excluded: {result['baseline']['violations']})")
    for cq in result["cqs"]:
        click.echo(f"  {'PASS' if cq['passed'] else 'FAIL'} {cq['id']}")
    click.echo(f"verify iterations: {result['verify_iterations']}, LM calls: {result['lm_calls']}, "
               f"compiled reused: {result['compiled_reused']}, compiled new: {result['compiled_new']}, "
               f"triples added: {result['triples_added']}")


@main.command("repair")
@click.argument("data", type=click.Path(exists=True, dir_okay=False))
@click.option("--shapes", required=True, type=click.Path(exists=True, dir_okay=False), help="SHACL shapes file.")
@click.option("--out", type=click.Path(), help="Write the repaired graph here (format from suffix).")
@click.option("--max-rounds", type=int, default=10, show_default=True, help="Verify / patch rounds at most.")
@click.option("--keep-values", is_flag=True,
              help="Replace or complete an offending value, never drop it (the default takes the smallest change).")
@lm_options
@memory_option
@json_option
@library_errors
def repair_data(data, shapes, out, max_rounds, keep_values, lm, api_base, memory_path, as_json):
    """Repair DATA until it conforms to SHAPES with deterministic operators; compile what worked into memory.

    With --lm, a violation no operator can fix is handed to the model (capped tools; its change set passes the
    same minimal-change rules and verification, and compiles like an operator's); without it, no LM is used.
    Exit 0 when the result conforms, 1 when violations are left, 2 on bad input. DATA and SHAPES may be one file:
    shape triples are never changed. The smallest change set that verifies wins: an optional bad value is dropped
    (one triple) rather than replaced (two) unless --keep-values is given.

    Example: owl-memory repair data.ttl --shapes shapes.ttl --memory .owl-memory --out fixed.ttl --json
    """
    from .model import sha256
    from .rdfio import check_output, guess_format, load_graph, read_text, write_graph
    from .repair import repair

    if out:
        check_output(out, guess_format(out))  # before anything is compiled into memory
    graph, shape_graph = load_graph(data), load_graph(shapes)
    proposer = None
    if lm:
        from .agent.runner import resolve_lm
        from .construction.proposer import LLMRepairProposer

        proposer = LLMRepairProposer(resolve_lm(lm, api_base))
    run = "cli-repair-" + sha256(read_text(data) + read_text(shapes))[:12]
    with Memory(memory_path) as m:
        result = repair(graph, shape_graph, memory=m, max_rounds=max_rounds, run_id=run, proposer=proposer,
                        keep_values=keep_values)
    if out:
        write_graph(result.graph, out, guess_format(out))
    emit(result.to_dict() | {"out": out}, as_json, _repair_report)
    sys.exit(EXIT_OK if result.conforms else EXIT_FAILED)


def _repair_report(summary: dict) -> None:
    """Print a repair's outcome for people."""
    click.echo(f"conforms={summary['conforms']} added={summary['added']} removed={summary['removed']} "
               f"verify iterations={summary['verify_iterations']} compiled reused={summary['compiled_reused']} "
               f"compiled new={len(summary['compiled_new'])}" + (f" -> {summary['out']}" if summary["out"] else ""))
    for sig, why in summary["reasons"].items():
        click.echo(f"  left: {sig}: {why}")


@main.command("copy")
@click.argument("src")
@click.argument("dst")
@json_option
@library_errors
def copy_command(src, dst, as_json):
    """Copy the memory SRC into DST (directories or SPARQL server URLs): same ids, triples, counters and payloads;
    DST is validated after the copy.

    Example: owl-memory copy .owl-memory http://127.0.0.1:7878
    """
    from .store.copy import copy_memory

    with Memory(src, create=False) as a, Memory(dst) as b:
        result = copy_memory(a, b)
    emit(result | {"src": src, "dst": dst}, as_json,
         lambda d: click.echo(f"copied {d['items']} items, {d['triples']} triples, {d['payloads']} payloads "
                              f"from {d['src']} to {d['dst']}"))


@main.command("report")
@click.argument("folder", type=click.Path(file_okay=False))
@json_option
@library_errors
def ablation_report(folder, as_json):
    """Rebuild FOLDER/report.html (inline SVG plots and tables) from an ablation's results.jsonl and summary.json.

    Example: owl-memory report runs/ablation-1 && xdg-open runs/ablation-1/report.html
    """
    from .ablation.report import build_report

    path = build_report(folder)
    emit({"report": str(path)}, as_json, lambda d: click.echo(d["report"]))


@main.command("ablate")
@click.argument("curriculum", type=click.Path(dir_okay=False))
@click.option("--conditions", default="A0,A2", show_default=True,
              help="Comma-separated conditions: " + CONDITION_HELP + ". Construction curricula: A0, A2. With an "
                   "experiment file (e.g. experiments/ablation/layers.yaml): its config names (E1,E7b,...).")
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
    curriculum (`kind: construction`: sprints and repair cases) needs no LM (conditions A0, A2).

    Example: owl-memory ablate experiments/curricula/library.yaml --conditions A0,A1,A2,A3,A4 --lm openai/gpt-4o-mini
    --holdout-every 4 --out runs/library

    Example: owl-memory ablate experiments/construction/curriculum.yaml --conditions A0,A2 --out runs/construction
    """
    from .ablation.harness import ablate

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
        click.echo(f"{name}: holdout success {last.get('mean', 0):.2f}, {cost}, iterations/holdout task "
                   f"{c['holdout_iterations_per_task']:g}, memory {c['memory_growth']['items_end']:g} items")
    click.echo(f"report: {Path(out) / 'report.html'}")
