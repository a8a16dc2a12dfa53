"""Stopping a parallel ablation, with real processes: SIGTERM, or Ctrl-C (SIGINT to the terminal's process group),
while both spawned workers wait on the LM stops every worker and their children, and still writes the summary and
the report of what finished (nothing had: an LM server holds every request)."""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm must not fetch its price list (no network)

import json  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from test_provider import ScriptedServer, action  # noqa: E402

CURRICULUM = Path(__file__).parent / "data" / "ablation" / "mini.yaml"


def descendants(pid: int) -> set[int]:
    """Every process below `pid` (children, grandchildren ...), read from /proc."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(stat.parent.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def alive(pid: int) -> bool:
    """True while a process exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.parametrize("how", ["sigterm", "ctrl-c"])
def test_a_stopped_ablation_leaves_no_process_and_keeps_its_summary(tmp_path, how):
    release, asked = threading.Event(), []

    def held(body):
        """Every request waits until the test ends."""
        asked.append(1)
        release.wait(120)
        return action("Late.", "SUBMIT(answer='late')")

    out = tmp_path / "out"
    env = {**os.environ, "OPENAI_API_KEY": "local-server"}
    with ScriptedServer([], respond=held) as server:
        cmd = [sys.executable, "-m", "owl_memory", "ablate", str(CURRICULUM), "--conditions", "A0,A2", "--lm",
               "openai/replay", "--api-base", server.base, "--out", str(out)]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                start_new_session=True)
        try:
            deadline = time.monotonic() + 180
            while len(asked) < 2 and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
            assert proc.poll() is None and len(asked) >= 2, proc.stderr.read().decode()[-2000:]
            family = descendants(proc.pid)
            assert len(family) >= 2  # the two spawned workers, and what they started
            os.killpg(proc.pid, signal.SIGINT) if how == "ctrl-c" else os.kill(proc.pid, signal.SIGTERM)
            proc.wait(60)
        finally:
            release.set()
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
    stderr = proc.stderr.read().decode()
    assert proc.returncode == 130 and "interrupted" in stderr, stderr[-2000:]
    time.sleep(1)
    assert not [p for p in family if alive(p)]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["records"] == 0 and summary["planned_records"] == 2 * 8
    assert (out / "report.html").is_file() and (out / "results.jsonl").read_text() == ""


MCP_HELLO = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "drill", "version": "1"}}}
LONG_COMMANDS = {  # a long command, caught in its long part: the LM holds every request, or its input never ends
    "train": (["train", str(CURRICULUM), "--lm", "openai/replay"], "train interrupted; {mem} keeps what the tasks"),
    "run": (["run", "Name a subclass of lib:Work.", "--lm", "openai/replay"], "run interrupted; nothing was learned"),
    "sprint": (["sprint", "--agent", "--lm", "openai/replay"], "sprint interrupted; {mem} keeps the graph versions"),
    "repair": (["repair", "{fifo}", "--shapes", "{fifo}"], "repair interrupted; nothing was written: {fifo} is"),
    "mcp": (["mcp"], "mcp server stopped; nothing to keep"),
}


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(LONG_COMMANDS))
def test_ctrl_c_ends_a_long_command_with_130_and_one_line_of_what_was_kept(tmp_path, command):
    args, said = LONG_COMMANDS[command]
    fifo, mem = tmp_path / "data.ttl", tmp_path / "mem"
    os.mkfifo(fifo)  # repair reads it until a writer closes it: never
    asked, release = threading.Event(), threading.Event()

    def held(body):
        """The LM never answers before the test ends."""
        asked.set()
        release.wait(120)
        return action("Late.", "SUBMIT(answer='late')")

    with ScriptedServer([], respond=held) as server:
        args = [a.replace("{fifo}", str(fifo)) for a in args] + ["--memory", str(mem)] * (command != "mcp")
        args += ["--api-base", server.base] * ("--lm" in args)
        proc = subprocess.Popen([sys.executable, "-m", "owl_memory", *args], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                                env={**os.environ, "OPENAI_API_KEY": "local-server"})
        try:
            if command == "mcp":
                proc.stdin.write(json.dumps(MCP_HELLO).encode() + b"\n")
                proc.stdin.flush()
                assert b'"result"' in proc.stdout.readline()  # serving
            elif "--lm" in args:
                assert asked.wait(120), proc.stderr.read().decode()[-2000:]
            else:
                time.sleep(3)  # blocked on the FIFO
            assert proc.poll() is None
            os.killpg(proc.pid, signal.SIGINT)
            _, stderr = proc.communicate(timeout=60)
        finally:
            release.set()
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
    lines = stderr.decode().splitlines()
    assert proc.returncode == 130 and len(lines) == 1, stderr.decode()[-2000:]
    assert lines[0].startswith("owl-memory: " + said.format(mem=mem, fifo=fifo)) and "Aborted" not in lines[0]
