"""The README's Quick start works as written: its main-job commands run, its test block is what CI runs."""

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def quick_start_blocks() -> list[list[str]]:
    """The command lines of each bash block under '## Quick start'."""
    text = ROOT.joinpath("README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [[ln.strip() for ln in b.splitlines() if ln.strip() and not ln.startswith("#")]
            for b in re.findall(r"```bash\n(.*?)```", section, re.S)]


def test_quick_start_has_exactly_two_bash_blocks_install_then_test():
    blocks = quick_start_blocks()
    assert len(blocks) == 2
    assert any(ln.startswith("pip install") for ln in blocks[0]) and any("owl-memory" in ln for ln in blocks[0])
    assert blocks[1][-1] == "pytest" and 'pip install -e ".[test]"' in blocks[1]


def test_main_job_commands_run_as_written(tmp_path):
    shutil.copytree(ROOT / "experiments", tmp_path / "experiments")
    exe = shutil.which("owl-memory")
    assert exe, "the owl-memory console script is not installed; run the Quick start install first"
    for line in (ln for ln in quick_start_blocks()[0] if ln.startswith("owl-memory")):
        cmd = [exe, *shlex.split(line)[1:]]
        done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, (line, done.stdout[-2000:], done.stderr[-2000:])


def test_console_script_and_module_answer_help():
    for cmd in ([sys.executable, "-m", "owl_memory", "--help"], [shutil.which("owl-memory"), "--help"]):
        assert cmd[0], "the owl-memory console script is not installed"
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and "Usage" in done.stdout


def server_block() -> list[str]:
    """The command lines of the first code block under '## Memory on a SPARQL server'."""
    text = ROOT.joinpath("README.md").read_text(encoding="utf-8")
    section = text.split("## Memory on a SPARQL server", 1)[1].split("\n## ", 1)[0]
    return [ln.strip() for ln in re.search(r"```\n(.*?)```", section, re.S).group(1).splitlines() if ln.strip()]


def test_server_commands_run_as_written(tmp_path):
    from owl_memory import ItemSpec, Memory
    from owl_memory_bench.servers import free_port, oxigraph_cli, wait_ready

    serve, *commands = server_block()
    with Memory(tmp_path / ".owl-memory") as m:
        item = m.add(ItemSpec("Principle", "Bind values, never paste", "Use when a query takes user text.", "bind"))
    port = str(free_port())  # the README's port 7878, moved to a free one
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


def python_blocks() -> list[str]:
    """Every ```python block of the README."""
    return re.findall(r"```python\n(.*?)```", ROOT.joinpath("README.md").read_text(encoding="utf-8"), re.S)


def test_python_examples_run_as_written(tmp_path, monkeypatch, capsys):
    """Every Python example compiles; those that need no LM run: the memory one, its SPARQL question, repair."""
    from owl_memory import Memory

    blocks = python_blocks()
    for block in blocks:
        compile(block, "README.md", "exec")
    monkeypatch.chdir(tmp_path)
    exec(compile(next(b for b in blocks if "ItemSpec(" in b), "README.md", "exec"), {})
    text = " ".join(ROOT.joinpath("README.md").read_text(encoding="utf-8").split())
    question = re.search(r"failed more often than they succeeded\? `([^`]+)`", text).group(1)
    with Memory(tmp_path / ".owl-memory") as m:
        assert m.sparql(question)["columns"] == ["i"]
    shapes = ROOT / "experiments" / "construction" / "library.shapes.ttl"
    example = next(b for b in blocks if "mutations(" in b).replace('"my-shapes.ttl"', repr(str(shapes)))
    capsys.readouterr()
    exec(compile(example, "README.md", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) >= 5 and all(line.endswith(" True") for line in lines)  # every mutation repaired
