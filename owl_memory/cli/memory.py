"""Commands over one memory: add, search, sparql, show, window, export, validate, copy, demo."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..errors import ConfigError, OwlMemoryError
from .common import (
    EXIT_FAILED,
    EXIT_OK,
    Memory,
    emit,
    interruptible,
    items_table,
    json_option,
    library_errors,
    mapping,
    memory_option,
    within,
)

if TYPE_CHECKING:
    from ..demo import DemoReport
    from ..model import OntologyContext, SearchExplanation, SparqlResult, Window
    from ..store import CopyReport


@click.command("add")
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
@click.option("--about-class", multiple=True, help="IRI of an ontology class the item is about (repeatable).")
@click.option("--about-property", multiple=True, help="IRI of an ontology property the item is about (repeatable).")
@memory_option
@json_option
@library_errors
def add_item(kind: str, title: str, summary: str, content: str | None, content_file: str | None,
             applies_to: tuple[str, ...], task_type: tuple[str, ...], failure_mode: tuple[str, ...],
             tag: tuple[str, ...], priority: int, confidence: float, scope: str, refines: str | None,
             about_class: tuple[str, ...], about_property: tuple[str, ...], memory_path: str, as_json: bool) -> None:
    """Validate and store one memory item; prints its id.

    Example: owl-memory add Principle "Bind values, never paste" "Use when a query takes user text." --content "..."
    """
    if (content is None) == (content_file is None):
        raise click.UsageError("give exactly one of --content or --content-file")
    from ..model import ItemSpec
    from ..rdfio import read_text

    text = read_text(content_file) if content_file is not None else str(content)  # exactly one of them is given
    spec = ItemSpec(kind, title, summary, text, applies_to=applies_to, task_types=task_type,
                    failure_modes=failure_mode, tags=tag, priority=priority, confidence=confidence, scope=scope,
                    refines=refines, about_classes=about_class,
                    about_properties=about_property)  # malformed fields fail here, before a memory is opened or created
    fresh = not Path(memory_path).exists()
    try:
        with Memory(memory_path, writes=True) as m:
            i = m.add(spec)
    except OwlMemoryError:
        if fresh:  # a refused first item leaves no memory behind (bad input writes nothing)
            shutil.rmtree(memory_path, ignore_errors=True)
        raise
    emit({"id": i}, as_json, lambda d: click.echo(d["id"]))


@click.command("search")
@click.argument("text", required=False)
@click.option("--ontology", help="Only items that apply to this ontology IRI.")
@click.option("--task-type", help="Only items for this task type.")
@click.option("--failure-mode", help="Only items that prevent this failure mode.")
@click.option("--kind", "kinds", multiple=True, help="Only these kinds (repeatable).")
@click.option("-k", "--limit", "k", type=int, default=5, show_default=True,
              help="How many items at most (1 to 50; more is cut to 50, and said).")
@click.option("--explain", is_flag=True, help="Also show the SPARQL SELECT that defines the result, and its bindings.")
@click.option("--about-class", help="Only items about this ontology class IRI.")
@click.option("--about-property", help="Only items about this ontology property IRI.")
@click.option("--about", help="Only items about this class or property IRI (as a class first, then as a property).")
@click.option("--follow", "follow", type=click.Path(exists=True, dir_okay=False),
              help="An ontology file: also items of the versions and aligned terms it declares, after the exact "
                   "ones, marked carried over (its ontology IRI is the --ontology unless given).")
@memory_option
@json_option
@library_errors
def search_items(text: str | None, ontology: str | None, task_type: str | None, failure_mode: str | None,
                 kinds: tuple[str, ...], k: int, explain: bool, about_class: str | None, about_property: str | None,
                 about: str | None, follow: str | None, memory_path: str, as_json: bool) -> None:
    """Search memory: ids and metadata of applicable items, best first.

    Example: owl-memory search "bind values" --ontology http://purl.org/dc/terms/ --json
    """
    from ..model import SearchExplanation
    from ..store import MAX_K, check_filters

    k = within(k, "-k", 1, MAX_K)
    check_filters(ontology=ontology, about_class=about_class, about_property=about_property, about=about)
    context = _followed(follow, ontology)
    with Memory(memory_path, create=False) as m:
        out = (m.explain if explain else m.search)(text, ontology=ontology, task_type=task_type,
                                                    failure_mode=failure_mode, kinds=kinds or None, k=k,
                                                    about_class=about_class, about_property=about_property,
                                                    about=about, context=context)
        partial = m.incomplete_copy if as_json else None  # said on stderr when opened; in JSON, as a field too
    if partial is not None:
        emit({"incomplete_copy": partial, **(out.to_dict() if isinstance(out, SearchExplanation)
                                            else {"hits": [h.to_dict() for h in out]})}, True)
    elif isinstance(out, SearchExplanation):
        emit(out, as_json, _explained)
    else:
        emit(out, as_json, items_table)


def _followed(path: str | None, ontology: str | None) -> OntologyContext | None:
    """The OntologyContext of an ontology file (None without one); ConfigError when it declares no ontology."""
    if path is None:
        return None
    from ..store import ontology_context

    context = ontology_context(path, ontology)
    if context is None:
        raise ConfigError(f"{path} declares no owl:Ontology; pass --ontology IRI with --follow")
    return context


def _explained(out: SearchExplanation) -> None:
    """Print search hits, then the defining SPARQL, its bindings and the engine that ran it."""
    items_table(out.hits)
    click.echo(out.sparql)
    click.echo(f"bindings: {json.dumps(out.bindings)}  engine: {out.engine}")


@click.command("sparql")
@click.argument("query")
@click.option("--bind", "binds", multiple=True, metavar="NAME=VALUE",
              help="Bind ?NAME: <iri> for an IRI, anything else as a literal (repeatable).")
@click.option("--limit", type=int, default=1000, show_default=True,
              help="Rows at most (1 to 1000; more is cut to 1000, and said).")
@click.option("--seconds", type=click.FloatRange(min=0.1), default=10.0, show_default=True,
              help="Wall time the query may take; past it the query stops (QueryTimeout, exit 2).")
@memory_option
@json_option
@library_errors
def sparql_query(query: str, binds: tuple[str, ...], limit: int, seconds: float, memory_path: str,
                 as_json: bool) -> None:
    """Ask a read-only SPARQL SELECT or ASK of the memory graph (items, links, provenance; never payload text).

    Example: owl-memory sparql 'PREFIX om: <http://w3id.org/owl-memory#> SELECT ?i ?t WHERE { ?i om:title ?t }'
    """
    from ..store import MAX_ROWS

    limit = within(limit, "--limit", 1, MAX_ROWS)
    with Memory(memory_path, create=False) as m:
        out = m.sparql(query, dict(_binding(b) for b in binds), limit=limit, seconds=seconds)
    emit(out, as_json, _rows_table)


def _binding(text: str) -> tuple[str, object]:
    """NAME=VALUE from --bind: <iri> becomes an IRI, anything else a literal."""
    name, sep, value = text.partition("=")
    if not sep:
        raise click.UsageError(f"--bind takes NAME=VALUE, got {text[:40]!r}")
    from rdflib import URIRef

    return name, URIRef(value[1:-1]) if value.startswith("<") and value.endswith(">") else value


def _rows_table(out: SparqlResult) -> None:
    """Print SPARQL rows as tab-separated lines under a header (and say when there are none, or when they were cut
    at the limit)."""
    if not out.rows:
        click.echo("(no rows)")
        return
    for row in [out.columns, *out.rows]:
        click.echo("\t".join("" if v is None else str(v) for v in row))
    if out.truncated:
        click.echo(f"(first {len(out.rows)} rows; more exist: narrow the query or raise --limit)")


@click.command("show")
@click.argument("item_id")
@memory_option
@json_option
@library_errors
def show_item(item_id: str, memory_path: str, as_json: bool) -> None:
    """Show an item's metadata, links, counters and compiled fields (never its payload).

    Example: owl-memory show 3f275e45e0a9e84e
    """
    with Memory(memory_path, create=False) as m:
        emit(m.get(item_id), as_json, lambda item: mapping(item.to_dict()))


@click.command("window")
@click.argument("item_id")
@click.option("--start", type=int, default=0, show_default=True, help="Offset in characters (>= 0).")
@click.option("--length", type=int, default=512, show_default=True,
              help="Characters (>= 1), capped at the memory's max read; the output says when it was cut.")
@memory_option
@json_option
@library_errors
def window_item(item_id: str, start: int, length: int, memory_path: str, as_json: bool) -> None:
    """Print a capped window of an item's payload.

    Example: owl-memory window 3f275e45e0a9e84e --start 0 --length 200
    """
    start, length = within(start, "--start", 0), within(length, "--length", 1)
    with Memory(memory_path, create=False) as m:
        window, cap = m.window(item_id, start, length), m.max_read
    emit(window, as_json, lambda d: _window_text(d, length, cap))


def _window_text(window: Window, asked: int, cap: int) -> None:
    """Print a window's text, then say on stderr what a person would otherwise miss: the read was cut at the cap,
    or the start is past the end."""
    click.echo(window.text)
    if window.start >= window.size and window.size:
        click.echo(f"(start {window.start} is past the end: the payload has {window.size} characters)", err=True)
    elif asked > cap and window.end < window.size:
        click.echo(f"(cut at the max read of {cap} characters; read on with --start {window.end})", err=True)


@click.command("export")
@click.argument("path")
@click.option("--format", "fmt", default="turtle", show_default=True, help="rdflib serializer name.")
@memory_option
@json_option
@library_errors
def export_memory(path: str, fmt: str, memory_path: str, as_json: bool) -> None:
    """Validate the memory against its shapes and write it as RDF.

    Example: owl-memory export memory.ttl
    """
    with Memory(memory_path, create=False) as m:
        out = m.export(path, format=fmt)
    emit({"path": str(out)}, as_json, lambda d: click.echo(d["path"]))


@click.command("validate")
@memory_option
@json_option
@library_errors
def validate_memory(memory_path: str, as_json: bool) -> None:
    """Validate every item against shapes/owl-memory-shapes.ttl; exit 1 when it does not conform.

    Example: owl-memory validate --json
    """
    with Memory(memory_path, create=False) as m:
        result = m.validate()
    emit(result, as_json, lambda report: mapping(report.to_dict()))
    sys.exit(EXIT_OK if result.conforms else EXIT_FAILED)


@click.command("copy")
@click.argument("src")
@click.argument("dst")
@json_option
@library_errors
@interruptible(lambda dst, **_: f"copy interrupted; {dst} is marked an incomplete copy (commands on it warn); run the "
               "same copy again to finish it")
def copy_command(src: str, dst: str, as_json: bool) -> None:
    """Copy the memory SRC into DST (directories or SPARQL server URLs): same ids, triples, counters and payloads;
    DST is validated after the copy.

    Example: owl-memory copy .owl-memory http://127.0.0.1:7878
    """
    from ..store import copy_memory

    with Memory(src, create=False) as a, Memory(dst, writes=True, finishing_copy=True) as b:
        result = copy_memory(a, b)
    emit(result, as_json, lambda r: click.echo(_copied(r, src, dst)), src=src, dst=dst)


def _copied(report: CopyReport, src: str, dst: str) -> str:
    """What a copy moved, in one line: items with their contents, triples, the other payloads."""
    there, n = report.items - report.contents, report.items
    return (f"copied {n} item{'' if n == 1 else 's'} with their contents" + (f" ({there} already there)" if there
            else "") + f", {report.triples} triples and {report.payloads} other payloads (run trajectories) from "
            f"{src} to {dst}")


@click.command("demo")
@click.option("--memory", "memory_path",
              help="Memory directory to build and keep (default: a temporary one, removed on exit).")
@json_option
@library_errors
def demo(memory_path: str | None, as_json: bool) -> None:
    """Build a memory about DC Terms (shipped inside owlready2), add items, search, print.

    Example: owl-memory demo
    """
    from ..demo import run_demo

    if memory_path:
        emit(run_demo(Path(memory_path)), as_json, lambda r: _demo_report(r, True), kept=True)
        return
    with tempfile.TemporaryDirectory(prefix="owl-memory-demo-") as tmp:  # removed on the way out, error or not
        emit(run_demo(Path(tmp) / "memory"), as_json, lambda r: _demo_report(r, False), kept=False)


def _demo_report(report: DemoReport, kept: bool) -> None:
    """Print what the demo built and found."""
    where = "" if kept else "; a temporary memory, removed on exit: pass --memory DIR to keep one"
    click.echo(f"memory: {report.memory} ({report.items} items from {report.ontology}{where})")
    for query, hits in report.searches.items():
        click.echo(f"\nsearch {query}")
        items_table(hits)
    click.echo(f"\nwindow of {report.top}: {report.window.text!r}")


COMMANDS = (add_item, search_items, sparql_query, show_item, window_item, export_memory, validate_memory, copy_command,
            demo)
