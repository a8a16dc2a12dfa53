"""The README works as written: its Quick start main-job commands run, its test block is what CI runs, its example
runs. Every other command of README.md and docs/ is run or checked by tests/test_docs.py."""

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


def python_blocks() -> list[str]:
    """Every ```python block of the README."""
    return re.findall(r"```python\n(.*?)```", ROOT.joinpath("README.md").read_text(encoding="utf-8"), re.S)


def test_python_examples_run_as_written(tmp_path, monkeypatch):
    """Every Python example compiles; the memory one (README's only example, it needs no LM) runs."""
    blocks = python_blocks()
    for block in blocks:
        compile(block, "README.md", "exec")
    monkeypatch.chdir(tmp_path)
    exec(compile(next(b for b in blocks if "ItemSpec(" in b), "README.md", "exec"), {})
    assert (tmp_path / ".owl-memory" / "memory.sqlite3").exists()
