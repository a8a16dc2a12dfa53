"""What every command shares: the options, the typed-error handler, JSON or human output, exit codes."""

from __future__ import annotations

import functools
import json
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, ParamSpec, TypeVar

import click

from ..errors import ConfigError, OwlMemoryError
from ..model.judgments import EMPTY_GOLD, Judgment

if TYPE_CHECKING:
    from .. import store
    from ..model import Hit

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command stopped by Ctrl-C
MAX_MESSAGE = 1000  # characters of an error message printed at most
T = TypeVar("T")
Decorated = TypeVar("Decorated", bound=Callable[..., Any])
Params = ParamSpec("Params")


def Memory(location: str | Path, *, writes: bool = False, create: bool = True,  # noqa: N802
           finishing_copy: bool = False) -> store.Memory:
    """owl_memory.Memory (this name stands in for the class at every call site), imported on first use: `--help`
    and commands without a memory skip the store's imports. `writes`: the command will write to it, so a read-only
    memory is MemoryReadOnly now, before any work. A memory that is an unfinished copy is said on stderr for every
    command (it may miss items), except the copy that finishes it (`finishing_copy`)."""
    from ..store import Memory as memory_class

    memory = memory_class(location, create=create)
    try:
        if writes:
            memory.require_writable()
        partial = None if finishing_copy else memory.incomplete_copy
    except OwlMemoryError:
        memory.close()
        raise
    if partial is not None:
        click.echo(f"owl-memory: warning: this memory is an incomplete copy of {partial}: it may miss items; run "
                   f"`owl-memory copy {partial} {location}` again to finish it", err=True)
    return memory


def memory_option(f: Decorated) -> Decorated:
    """Shared `--memory PATH` option."""
    return click.option("--memory", "memory_path", default=".owl-memory", show_default=True,
                        type=str,
                        help="Memory directory (created by commands that write) or SPARQL server URL "
                             "(http://host:port).")(f)


def json_option(f: Decorated) -> Decorated:
    """Shared `--json` option."""
    return click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")(f)


def lm_options(f: Decorated) -> Decorated:
    """Shared `--lm MODEL` and `--api-base URL` options."""
    f = click.option("--api-base", help="Base URL of an OpenAI-compatible server, e.g. http://localhost:11434/v1.")(f)
    return click.option("--lm", help="Any DSPy/litellm model string, e.g. openai/gpt-4o-mini (run: default "
                                     "$OWL_MEMORY_LM; sprint and repair: default none, symbolic only); for run, "
                                     "train and ablate also 'scripted': a fixed two-step stand-in, no model, that "
                                     "answers nothing (to try the commands), and 'replay:ANSWERS.json': the queries "
                                     "a TEXT2SPARQL answers file records, run through the endpoint tools (a replay, "
                                     "not a model: it cannot use memory).")(f)


def lm_limits(f: Decorated) -> Decorated:
    """Shared `--sub-lm MODEL`, `--max-tokens N`, `--timeout SECONDS` and `--max-output-chars N` options (commands
    that run an RLM)."""
    f = click.option("--max-output-chars", type=click.IntRange(min=1), metavar="N",
                     help="Characters of REPL output the model sees per iteration (default 4000; dspy.RLM cuts the "
                          "rest). Runs and records show it.")(f)
    f = click.option("--timeout", type=click.FloatRange(min=0, min_open=True),
                     help="Seconds one LM call may take (litellm's request timeout; dspy retries a failed call up "
                          "to 3 times).")(f)
    f = click.option("--max-tokens", type=click.IntRange(min=1),
                     help="Completion tokens one LM call may generate (sent as max_tokens, and to an --api-base "
                          "server also as max_completion_tokens: local servers honour one or the other).")(f)
    return click.option("--sub-lm", help="Model string for the model's llm_query calls inside the RLM (default: the "
                                         "main --lm); its calls and tokens are counted apart.")(f)


def quota_options(f: Decorated) -> Decorated:
    """Shared `--k` (A1's quota) and `--budgets` (layer budgets) options."""
    f = click.option("--budgets", help="Layer budgets in characters, e.g. L0=400,L1=800,L3=600,L2=800 (each at "
                                       "most 1000; L2: A1's injected text, default 1000).")(f)
    return click.option("--k", "k", help="Items A1 injects: N (the top N) or success,failure,seed counts; default "
                                         "2,1,1 (top 2 success, 1 failure, 1 seed item).")(f)


def endpoint_map_option(f: Decorated) -> Decorated:
    """Shared `--endpoint-map TARGET=URL` option (run, train, ablate, score)."""
    return click.option("--endpoint-map", "endpoint_map", multiple=True, metavar="TARGET=URL",
                        help="Point a corpus's endpoint (a SHACL example's schema:target, a TEXT2SPARQL file's "
                             "dataset id) at URL (a mirror, a local copy; repeatable): agents may query URL with the "
                             "endpoint_* tools and tasks are judged by running their reference query there. "
                             "TARGET=TARGET allows the target itself; unmapped tasks are judged structurally.")(f)


def corpus_options(f: Decorated) -> Decorated:
    """Shared `--language`, `--split-seed` and `--ontology` options (commands that load a curriculum)."""
    f = click.option("--ontology", "vocabulary", type=click.Path(exists=True, dir_okay=False),
                     help="Endpoint corpora (TEXT2SPARQL questions, SHACL examples): a local copy of the endpoint's "
                          "vocabulary, for the agent's ontology tools and context layers.")(f)
    f = click.option("--split-seed", type=int, default=0, show_default=True,
                     help="TEXT2SPARQL questions files: the seed of the train / holdout split.")(f)
    return click.option("--language", default="en", show_default=True,
                        help="TEXT2SPARQL questions files: the language of the questions asked.")(f)


def library_errors(f: Callable[Params, T]) -> Callable[Params, T]:
    """Turn owl-memory's typed errors (bad input) into one line on stderr, JSON under --json, and exit code 2.

    Any other exception is a bug and keeps its traceback (exit 1).
    """
    @functools.wraps(f)
    def wrapper(*args: Params.args, **kwargs: Params.kwargs) -> T:
        """The command, its typed errors reported."""
        try:
            return f(*args, **kwargs)
        except OwlMemoryError as e:
            fail(e, bool(kwargs.get("as_json", False)))
    return wrapper


def interruptible(kept: Callable[..., str]) -> Callable[[Callable[Params, T]], Callable[Params, T]]:
    """Ctrl-C (KeyboardInterrupt; an ablation's SIGTERM too) ends a long command with exit 130 and one line on stderr,
    `kept(**the command's arguments)`, saying what was done and what was kept, instead of click's "Aborted!"."""
    def decorate(f: Callable[Params, T]) -> Callable[Params, T]:
        @functools.wraps(f)
        def wrapper(*args: Params.args, **kwargs: Params.kwargs) -> T:
            """The command, a Ctrl-C reported."""
            try:
                return f(*args, **kwargs)
            except KeyboardInterrupt:
                click.echo(f"owl-memory: {kept(**kwargs)}", err=True)
                sys.exit(EXIT_INTERRUPTED)
        return wrapper
    return decorate


def fail(error: OwlMemoryError, as_json: bool) -> NoReturn:
    """Print a typed error as one line on stderr (a JSON object when `as_json`) and exit 2."""
    message = " ".join(str(error).split())[:MAX_MESSAGE]
    line = json.dumps({"error": type(error).__name__, "message": message}, ensure_ascii=False) if as_json \
        else f"owl-memory: {type(error).__name__}: {message}"
    click.echo(line, err=True)
    sys.exit(EXIT_BAD_INPUT)


def emit(data: T, as_json: bool, render: Callable[[T], None] | None = None, **fields: object) -> None:
    """Print `data` for scripts, as one JSON line on stdout (a typed value in its to_dict form, `fields` added after
    its own), or for people through `render`, which reads the typed value."""
    if as_json or render is None:
        plain = _plain(data)
        click.echo(json.dumps({**plain, **fields} if fields else plain, ensure_ascii=False, default=str))
    else:
        render(data)


def _plain(data: object) -> Any:
    """A typed value (anything with to_dict), or a list of them, as JSON-compatible data (the edge: any JSON)."""
    if isinstance(data, list):
        return [_plain(x) for x in data]
    to_dict = getattr(data, "to_dict", None)
    return to_dict() if callable(to_dict) else data


def table(header: tuple[str, ...], rows: Sequence[tuple], empty: str) -> None:
    """Print rows as plain aligned columns (no box drawing), or `empty` in words when there are none. On a terminal
    the last column (free text) is cut to fit its width, at least 80 columns' worth; every other column (ids,
    numbers) is printed whole. Piped output is never cut."""
    if not rows:
        click.echo(empty)
        return
    lines = [tuple(str(c) for c in header), *[tuple(str(c) for c in row) for row in rows]]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header) - 1)]
    room = shutil.get_terminal_size((80, 24)).columns - sum(widths) - 2 * len(widths) if sys.stdout.isatty() else None
    for line in lines:
        last = line[-1] if room is None or len(line[-1]) <= max(room, 8) else line[-1][: max(room, 8) - 1] + "…"
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(line[:-1], widths, strict=True)) + "  " + last)


def items_table(hits: Sequence[Hit]) -> None:
    """Print search hits best first: rank, id (whole: paste it into `show`), kind, priority, confidence and title.
    The score is not shown (a BM25 score in a small memory can be 2e-06 for a perfect match); --json carries it."""
    table(("#", "id", "kind", "priority", "confidence", "title"),
          [(n, h.id, h.kind, h.priority, f"{h.confidence:.2f}", h.title + _marks(h)) for n, h in enumerate(hits, 1)],
          "no items match")


def _marks(hit: Hit) -> str:
    """What a hit adds after its title, compactly: the terms it is about (local names) and where it was carried
    over from ("" for an item with neither)."""
    from ..vocab import local_name

    about = [local_name(t) for t in (*hit.about_classes, *hit.about_properties)]
    carried = hit.carried_over_from
    return (f" [about {', '.join(about)}]" if about else "") + (f" [carried over from {carried}]" if carried else "")


def within(value: int, name: str, low: int, high: int | None = None) -> int:
    """A number option checked against its range: below `low` is refused (ConfigError, exit 2, naming the range);
    above `high` is cut to `high` and said on stderr."""
    if value < low:
        bounds = f"from {low} to {high}" if high is not None else f"at least {low}"
        raise ConfigError(f"{name} must be {bounds}, got {value}")
    if high is not None and value > high:
        click.echo(f"owl-memory: {name} {value} is above its cap of {high}; using {high}", err=True)
        return high
    return value


def mapping(data: Mapping[str, object]) -> None:
    """Print a dict as key: value lines."""
    for key, value in data.items():
        click.echo(f"{key}: {value}")


def warn_empty_gold(judged: Sequence[tuple[str, Judgment | None]]) -> None:
    """A warning on stderr for each task whose gold query returned no rows (failure mode EMPTY_GOLD): it was judged
    no answer and taught nothing, which a typo in the gold usually explains."""
    for task, judgment in judged:
        if judgment is not None and judgment.failure_mode == EMPTY_GOLD:
            click.echo(f"owl-memory: warning: the gold of {task} returned no rows: judged no answer, nothing learned; "
                       "fix the gold, or set expect.empty: true when no answer is the expected one", err=True)
