"""README.md and docs/ work as written, and the CLI is documented.

Every command line of a ```bash block that starts with `owl-memory` or `python` is run or checked by a test:
- README's Quick start blocks by tests/test_readme.py (and CI's .ci/run), README's "Check the loop from a fresh
  clone" block by tests/test_learning_cli.py;
- docs/tutorial.md's blocks run in order in one folder, as a reader follows the tutorial;
- the block that starts an Oxigraph server (`oxigraph serve`) by test_server_commands_run_as_written, which starts
  the server itself on a free port;
- docs/measurements.md's blocks are the runs behind its figures, minutes to hours each, so they are checked, not
  run: a `python benchmarks/...` line names only options the script's `--help` lists, an `owl-memory` line passes
  the command's own option parser (every option, value and file argument), and the same command runs as written,
  at the size the how-to guides give, in a block that a test runs;
- every other block runs whole (`bash -euo pipefail`) in a temp folder holding copies of a clone's experiments/,
  ontology/ and shapes/, with no API key: commands that need an LM use `--lm scripted`, the stand-in the project
  ships. The guides write these commands at the size a reader should try first, and say in prose how to scale up.
Every ```python block compiles and runs as a script in such a folder (none needs a model: they use `scripted`).
The runs are started together, as many at a time as the machine has cores, and each test waits for its own.
Every CLI command, subgroups' commands included, has help with an "Example:", a row in README's CLI table and a
mention in docs/ besides the generated reference (docs/cli.md), which must be what `cog -r docs/cli.md` writes.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from owl_memory.cli import main
from owl_memory.datadir import data_dir

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, *DOCS]
TUTORIAL = ROOT / "docs" / "tutorial.md"
MEASUREMENTS = ROOT / "docs" / "measurements.md"
CLI_REFERENCE = ROOT / "docs" / "cli.md"
REGENERATE = "cog -r docs/cli.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
HEADING = re.compile(r"^(#{1,6}) (.+)$", re.M)
RUN_ELSEWHERE = {"## Quick start": "tests/test_readme.py",
                 "### Check the loop from a fresh clone": "tests/test_learning_cli.py"}
CLONE_FOLDERS = ("experiments", "ontology", "shapes")


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page, with the heading it sits under."""

    page: Path
    lang: str
    text: str
    heading: str
    index: int

    @property
    def name(self) -> str:
        """A readable test id: page, heading, position on the page."""
        return f"{self.page.name}:{self.heading.lstrip('# ')}:{self.index}"


def text_of(page: Path) -> str:
    """A page's text."""
    return page.read_text(encoding="utf-8")


@cache
def all_blocks() -> tuple[Block, ...]:
    """Every fenced block of README.md and docs/*.md, in page order."""
    found = []
    for page in PAGES:
        text = text_of(page)
        headings = [(m.start(), m.group(0)) for m in HEADING.finditer(without_fences(text))]
        for i, m in enumerate(FENCE.finditer(text)):
            heading = next((h for at, h in reversed(headings) if at < m.start()), "")
            found.append(Block(page, m.group(1), m.group(2), heading, i))
    return tuple(found)


def without_fences(text: str) -> str:
    """The page with every fenced block blanked out (same length), so '#' comments are not taken for headings."""
    return FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def command_lines(text: str) -> list[str]:
    """A bash block's command lines: continuations joined, blank and comment lines dropped."""
    joined = re.sub(r"\\\n\s*", " ", text)
    return [ln.strip() for ln in joined.splitlines() if ln.strip() and not ln.strip().startswith("#")]


def runnable(block: Block) -> bool:
    """A bash block with at least one line that starts with `owl-memory` or `python`."""
    return block.lang == "bash" and any(ln.startswith(("owl-memory", "python")) for ln in command_lines(block.text))


def kind(block: Block) -> str:
    """Which test runs a runnable bash block: elsewhere, server, measurement, tutorial or here."""
    lines = command_lines(block.text)
    if block.page == README and block.heading in RUN_ELSEWHERE:
        return "elsewhere"
    if any(ln.startswith("oxigraph serve") for ln in lines):
        return "server"
    if block.page == MEASUREMENTS:
        return "measurement"
    if block.page == TUTORIAL:
        return "tutorial"
    return "here"


def bash_blocks(of_kind: str) -> list[Block]:
    """The runnable bash blocks of one kind."""
    return [b for b in all_blocks() if runnable(b) and kind(b) == of_kind]


def python_blocks() -> list[Block]:
    """Every ```python block of docs/ (README's own example is run by tests/test_readme.py)."""
    return [b for b in all_blocks() if b.lang == "python" and b.page != README]


def tutorial() -> Block:
    """The tutorial's bash blocks as one script, in page order: a reader runs them in one folder, one after another."""
    blocks = bash_blocks("tutorial")
    return Block(TUTORIAL, "bash", "".join(b.text for b in blocks), "every block in order", len(blocks))


def clone_folder(tmp_path: Path) -> Path:
    """A temp folder holding the files of a clone the docs use (experiments/, ontology/, shapes/)."""
    for name in CLONE_FOLDERS:
        shutil.copytree(ROOT / name, tmp_path / name)
    return tmp_path


def environment(data: Path | None = None) -> dict:
    """The environment of a docs command: this venv first on PATH, no API keys, no default LM."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "OWL_MEMORY_LM"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    if data is not None:
        env["OWL_MEMORY_DATA"] = str(data)
    return env


def needs_data(block: Block) -> bool:
    """A block that reads ../shared/data (the real Knowledge Fabric sprint)."""
    return "sprint-fabric" in block.text or "OWL_MEMORY_DATA" in block.text


def run_block(block: Block, folder: Path, data: Path | None) -> subprocess.CompletedProcess:
    """Run a bash block (`bash -euo pipefail`) or a python block (a script) in `folder`, a copy of a clone's files."""
    clone_folder(folder)
    if block.lang == "python":
        (folder / "example.py").write_text(block.text, encoding="utf-8")
        argv = [sys.executable, str(folder / "example.py")]
    else:
        argv = ["bash", "-euo", "pipefail", "-c", block.text]
    return subprocess.run(argv, cwd=folder, env=environment(data), stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=900)


def run_help(script: str) -> subprocess.CompletedProcess:
    """Run a benchmark script with `--help`."""
    return subprocess.run([sys.executable, str(ROOT / script), "--help"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env=environment())


def script_of(line: str) -> str:
    """The script a `python benchmarks/...` line runs."""
    return shlex.split(line, comments=True)[1]


@pytest.fixture(scope="session")
def started(request, tmp_path_factory):
    """The run of each selected test's block (or benchmark `--help`), all started at the first test that asks, as
    many at a time as there are cores; `started(block_or_script)` waits for one.

    Under pytest-xdist, whose workers each collect every test but run only some, a run starts when its test asks.
    """
    pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 2)
    data = data_dir(required=False)
    runs: dict[Block | str, Future] = {}

    def start(key: Block | str) -> Future:
        """The run of a block or a script's help, started now unless it already is."""
        if key not in runs and isinstance(key, str):
            runs[key] = pool.submit(run_help, key)
        elif key not in runs:
            folder = tmp_path_factory.mktemp(re.sub(r"\W+", "-", key.name)[:60])
            runs[key] = pool.submit(run_block, key, folder, data if needs_data(key) else None)
        return runs[key]

    if not os.environ.get("PYTEST_XDIST_WORKER"):
        for item in request.session.items:
            params = getattr(item, "callspec", None) and item.callspec.params or {}
            if isinstance(params.get("block"), Block) and (data or not needs_data(params["block"])):
                start(params["block"])
            elif str(params.get("line", "")).startswith("python benchmarks/"):
                start(script_of(params["line"]))
    yield lambda key: start(key).result()
    pool.shutdown(cancel_futures=True)


def assert_ran(block: Block, done: subprocess.CompletedProcess) -> str:
    """The run's stdout, after asserting it exited 0."""
    assert done.returncode == 0, (block.text, done.stdout[-2000:], done.stderr[-3000:])
    return done.stdout


# ---- every bash block is run by some test ----

def test_every_runnable_bash_block_has_one_test_that_runs_it():
    blocks = [b for b in all_blocks() if runnable(b)]
    assert len(blocks) >= 10
    for b in bash_blocks("measurement"):  # only measurement lines there: anything else would go unchecked
        lines = command_lines(b.text)
        assert all(ln.startswith(("python benchmarks/", "owl-memory ")) for ln in lines), b.name
    assert [b.page.name for b in bash_blocks("server")] == ["server.md"]
    assert sorted(b.heading for b in bash_blocks("elsewhere")) == sorted(RUN_ELSEWHERE)
    assert len(bash_blocks("tutorial")) >= 4


@pytest.mark.parametrize("block", bash_blocks("here"), ids=lambda b: b.name)
def test_bash_block_runs_as_written(block, started, request):
    if needs_data(block):
        request.getfixturevalue("shared_data")  # skips, or fails in CI, when the data folder is absent
    assert_ran(block, started(block))


@pytest.mark.parametrize("block", [tutorial()], ids=lambda b: b.name)
def test_the_tutorial_runs_in_order_in_one_folder(block, started):
    out = assert_ran(block, started(block))
    assert "6d37b341a44f6386" in out and "AntiPattern" in out and "A2: holdout success" in out


def measurement_lines(program: str) -> list[str]:
    """Every command line of docs/measurements.md that starts with `program`."""
    return [ln for b in bash_blocks("measurement") for ln in command_lines(b.text) if ln.startswith(program)]


@pytest.mark.parametrize("line", measurement_lines("python benchmarks/"))
def test_benchmark_command_lines_name_only_options_the_script_has(line, started):
    """A benchmark run takes minutes to hours: check the line against the script's `--help`."""
    script = script_of(line)
    assert (ROOT / script).is_file(), script
    done = started(script)
    assert done.returncode == 0, (script, done.stderr[-2000:])
    options = [a.split("=", 1)[0] for a in shlex.split(line, comments=True)[2:] if a.startswith("--")]
    for option in options:
        assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", done.stdout), (line, option)


def command_of(argv: list[str]) -> tuple[click.Command, list[str], list[str]]:
    """The CLI command an `owl-memory` argv names, the words that name it, and the arguments left for it."""
    command, path, args = main, [], argv[1:]
    while isinstance(command, click.Group) and args and args[0] in command.commands:
        command, path, args = command.commands[args[0]], [*path, args[0]], args[1:]
    return command, path, args


def ran_commands() -> set[tuple[str, ...]]:
    """The CLI commands that some bash block a test runs as written uses."""
    lines = [ln for b in [*bash_blocks("here"), *bash_blocks("tutorial"), *bash_blocks("server")]
             for ln in command_lines(b.text) if ln.startswith("owl-memory ")]
    return {tuple(command_of(shlex.split(ln, comments=True))[1]) for ln in lines}


@pytest.mark.parametrize("line", measurement_lines("owl-memory "))
def test_owl_memory_measurement_lines_parse_and_their_command_runs_elsewhere(line, monkeypatch):
    """A measuring run takes minutes: its line must pass the command's own parser (options, values, files), in a
    clone's root, and the same command must run as written, at a smaller size, in a how-to guide's block."""
    monkeypatch.chdir(ROOT)
    command, path, args = command_of(shlex.split(line, comments=True))
    assert path and not isinstance(command, click.Group), line
    program = click.Context(main, info_name="owl-memory", **main.context_settings)  # its settings, as a run has them
    ctx = command.make_context(" ".join(path), args, parent=program)  # raises click's UsageError / BadParameter
    for param in command.params:  # the files the run reads (its arguments) are in a clone
        if isinstance(param, click.Argument) and isinstance(param.type, click.Path):
            assert Path(ctx.params[param.name]).exists(), (line, ctx.params[param.name])
    assert tuple(path) in ran_commands(), f"no block a test runs uses owl-memory {' '.join(path)}"


def test_every_measurement_has_the_command_that_measures_it():
    """Each section of docs/measurements.md that holds a table holds a command block that a test checks."""
    text = without_fences(text_of(MEASUREMENTS))
    titles = [s.splitlines()[0] for s in re.split(r"^## ", text, flags=re.M)[1:] if "|---" in s]
    assert len(titles) >= 6
    headings = {b.heading for b in bash_blocks("measurement")}
    for title in titles:
        assert f"## {title}" in headings, title


# ---- the server block ----

def server_block() -> list[str]:
    """The command lines of docs/server.md's bash block that starts an Oxigraph server."""
    block = next(b for b in bash_blocks("server"))
    return [ln.strip() for ln in block.text.splitlines() if ln.strip()]


def test_server_commands_run_as_written(tmp_path):
    from owl_memory import ItemSpec, Memory
    from owl_memory_bench.servers import free_port, oxigraph_cli, wait_ready

    serve, *commands = server_block()
    with Memory(tmp_path / ".owl-memory") as m:
        item = m.add(ItemSpec("Principle", "Bind values, never paste", "Use when a query takes user text.", "bind"))
    port = str(free_port())  # the docs' port 7878, moved to a free one
    argv = [a.replace("7878", port) for a in shlex.split(serve, comments=True)]
    assert argv[:2] == ["oxigraph", "serve"]
    server = subprocess.Popen([oxigraph_cli(), *argv[1:]], cwd=tmp_path, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        wait_ready(f"http://127.0.0.1:{port}/query", server)
        outputs = []
        for line in commands:
            cmd = [shutil.which("owl-memory"), *[a.replace("7878", port) for a in shlex.split(line, comments=True)[1:]]]
            done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, (line, done.stdout[-2000:], done.stderr[-2000:])
            outputs.append(done.stdout)
        assert item in outputs[-1]  # the search on the server finds the item copied from the directory
    finally:
        server.terminate()
        server.wait(10)


# ---- python blocks ----

CHECKED_APART = "mutations("  # the repair example: test_repair_example_repairs_every_mutation checks its output


def test_every_python_block_compiles():
    blocks = python_blocks()
    assert len(blocks) >= 5
    for b in blocks:
        compile(b.text, b.name, "exec")


@pytest.mark.parametrize("block", [b for b in python_blocks() if CHECKED_APART not in b.text], ids=lambda b: b.name)
def test_python_block_runs_as_written(block, started):
    assert_ran(block, started(block))


@pytest.mark.parametrize("block", [b for b in python_blocks() if CHECKED_APART in b.text], ids=lambda b: b.name)
def test_repair_example_repairs_every_mutation(block, started):
    lines = assert_ran(block, started(block)).splitlines()
    assert len(lines) >= 5 and all(line.endswith(" True") for line in lines)  # every mutation repaired


def test_sparql_question_in_the_memory_docs_runs(tmp_path, monkeypatch):
    """The question quoted in docs/memory.md, asked of the memory README's example builds."""
    from owl_memory import Memory

    example = next(b for b in re.findall(r"```python\n(.*?)```", text_of(README), re.S) if "ItemSpec(" in b)
    monkeypatch.chdir(tmp_path)
    exec(compile(example, "README.md", "exec"), {})
    text = " ".join(text_of(ROOT / "docs" / "memory.md").split())
    question = re.search(r"failed more often than they succeeded\? `([^`]+)`", text).group(1)
    with Memory(tmp_path / ".owl-memory") as m:
        assert m.sparql(question).columns == ("i",)


# ---- the CLI is documented ----

def cli_commands(group: click.Group = main, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command path of the CLI, subgroups and their commands included: ('add',), ('pack',), ('pack', 'export')."""
    paths = []
    for name, command in sorted(group.commands.items()):
        paths.append((*prefix, name))
        if isinstance(command, click.Group):
            paths += cli_commands(command, (*prefix, name))
    return paths


def cli_table() -> str:
    """The table under README's '## Command line'."""
    section = text_of(README).split("\n## Command line", 1)[1].split("\n## ", 1)[0]
    return "\n".join(ln for ln in section.splitlines() if ln.startswith("|"))


def mentions(text: str, name: str) -> bool:
    """`text` names the command `name` (not a longer command that starts with it)."""
    return re.search(rf"{re.escape(name)}(?![\w-])", text) is not None


def test_the_program_help_has_an_example():
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0 and "Example:" in result.output


@pytest.mark.parametrize("path", cli_commands(), ids=" ".join)
def test_every_command_has_help_with_an_example_a_table_row_and_docs(path):
    result = CliRunner().invoke(main, [*path, "--help"])
    assert result.exit_code == 0 and "Example:" in result.output, result.output
    name = "owl-memory " + " ".join(path)
    assert f"| `{name}` |" in cli_table(), f"README's CLI table has no row for {name}"
    guides = [page for page in DOCS if page != CLI_REFERENCE]
    assert any(mentions(text_of(page), name) for page in guides), f"no page of docs/ but cli.md mentions {name}"


def test_the_cli_reference_is_what_cog_generates():
    from cogapp import Cog

    text = text_of(CLI_REFERENCE)
    assert REGENERATE in text, "docs/cli.md's header must say how to regenerate it"
    generated = Cog().process_string(text, fname=str(CLI_REFERENCE))
    assert generated == text, f"docs/cli.md is not what the commands' --help generate: run `{REGENERATE}`"
    for path in cli_commands():
        assert f"\n## owl-memory {' '.join(path)}\n" in text, path


def test_the_cli_table_names_only_real_commands():
    named = re.findall(r"^\| `owl-memory ([^`]+)` \|", cli_table(), re.M)
    assert sorted(tuple(n.split()) for n in named) == sorted(cli_commands())


def test_inline_commands_are_bare_names_or_run_by_a_test():
    """An inline `owl-memory ...` span is a command name, or a line of a bash block that a test runs."""
    commands = {"owl-memory " + " ".join(p) for p in cli_commands()} | {"owl-memory"}
    lines = {ln for b in all_blocks() if runnable(b) for ln in command_lines(b.text)}
    for page in PAGES:
        for span in re.findall(r"`(owl-memory(?: [^`]*)?)`", without_fences(text_of(page))):
            assert span in commands or any(span in ln for ln in lines), (page.name, span)


# ---- the front door stays a front door ----

def test_readme_is_short_and_keeps_no_lab_notes():
    text = text_of(README)
    assert len(text.encode("utf-8")) <= 8_500
    assert not re.search(r"\d{1,2}:\d{2}(-\d{1,2}:\d{2})? UTC|load (average )?\d|\bon [0-9a-f]{7}\b", text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("page", [*PAGES, ROOT / "benchmarks" / "README.md"], ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_to_files_and_headings_that_exist(page):
    for target in re.findall(r"\]\(([^)\s]+)\)", without_fences(text_of(page))):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        assert file.exists(), (page.name, target)
        if anchor:
            anchors = {slug(h) for _, h in HEADING.findall(without_fences(text_of(file)))}
            assert anchor in anchors, (page.name, target)
