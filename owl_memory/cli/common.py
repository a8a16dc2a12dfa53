"""What every command shares: the options, the typed-error handler, JSON or human output, exit codes."""

from __future__ import annotations

import functools
import json
import shutil
import sys

import click

from ..errors import OwlMemoryError

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
MAX_MESSAGE = 1000  # characters of an error message printed at most


def Memory(*args, **kwargs):  # noqa: N802 (stands in for the class at every call site)
    """owl_memory.Memory, imported on first use: `--help` and commands without a memory skip the store's imports."""
    from ..store.memory import Memory as memory_class

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


def items_table(items: list[dict]) -> None:
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


def mapping(data: dict) -> None:
    """Print a dict as key: value lines."""
    for key, value in data.items():
        click.echo(f"{key}: {value}")
