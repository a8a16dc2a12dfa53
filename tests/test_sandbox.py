"""The bubblewrap sandbox: the agent's code gets no network, no foreign files and no writes outside its scratch
folder, while tools still run on the host. Each refusal is shown against the default interpreter as a control."""

import os
import shutil
import socket
import threading
import time

import pytest
from dspy.utils import DummyLM

from owl_memory.adapters.dspy import CodeExecutionError, LocalInterpreter
from owl_memory.agent.runner import run
from owl_memory.resources import shipped

if shutil.which("bwrap") is None:
    if os.environ.get("OWL_MEMORY_REQUIRE_SANDBOX") == "1":
        pytest.fail("OWL_MEMORY_REQUIRE_SANDBOX=1 but bwrap is missing: apt-get install bubblewrap",
                    pytrace=False)
    pytest.skip("bubblewrap (bwrap) is not installed: apt-get install bubblewrap", allow_module_level=True)

from owl_memory.agent.sandbox import BwrapInterpreter, Sandbox  # noqa: E402

CONNECT = """import socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
    print("connected")
except OSError as e:
    print("refused:", type(e).__name__)"""


@pytest.fixture
def interpreters(tmp_path):
    """A sandboxed and a default interpreter, shut down after the test."""
    box, plain = BwrapInterpreter(scratch=None), LocalInterpreter()
    yield box, plain
    box.shutdown()
    plain.shutdown()


@pytest.fixture
def listener():
    """A loopback TCP server on the host that counts the connections it accepts."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted = []

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            accepted.append(conn)
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1], accepted
    server.close()


def _wait_for(done, limit: float = 10.0) -> None:
    """Poll `done` until it holds or `limit` seconds pass (the caller asserts afterwards)."""
    end = time.monotonic() + limit
    while not done() and time.monotonic() < end:
        time.sleep(0.01)


def test_no_network_socket_not_even_to_the_hosts_loopback(interpreters, listener):
    (box, plain), (port, accepted) = interpreters, listener
    assert plain.execute(CONNECT.format(port=port)).strip() == "connected"  # control: the default reaches it
    _wait_for(lambda: len(accepted) == 1)  # the accept thread may run after the client has already closed
    assert len(accepted) == 1
    assert box.execute(CONNECT.format(port=port)).strip().startswith("refused:")
    dns = ("import socket\ntry:\n    socket.getaddrinfo('example.org', 443)\n    print('resolved')\n"
           "except OSError:\n    print('no dns')")
    assert box.execute(dns).strip() == "no dns"
    assert len(accepted) == 1


def test_no_reading_files_outside_what_it_is_given(tmp_path, interpreters):
    box, plain = interpreters
    secret, given = tmp_path / "secret.txt", tmp_path / "given"
    secret.write_text("s3cret", encoding="utf-8")
    given.mkdir()
    (given / "data.txt").write_text("shared", encoding="utf-8")
    read = "try:\n    print(open({!r}).read())\nexcept OSError as e:\n    print('refused:', type(e).__name__)"
    assert plain.execute(read.format(str(secret))).strip() == "s3cret"  # control
    assert box.execute(read.format(str(secret))).strip().startswith("refused:")
    assert box.execute(read.format(os.path.expanduser("~/.bashrc"))).strip().startswith("refused:")
    allowed = BwrapInterpreter(read_paths=[given])
    try:
        assert allowed.execute(read.format(str(given / "data.txt"))).strip() == "shared"
        assert allowed.execute(read.format(str(secret))).strip().startswith("refused:")
    finally:
        allowed.shutdown()


def test_no_writing_outside_the_scratch_folder(tmp_path):
    scratch, given = tmp_path / "scratch", tmp_path / "given"
    scratch.mkdir()
    given.mkdir()
    box = BwrapInterpreter(read_paths=[given], scratch=scratch)
    write = "try:\n    open({!r}, 'w').write('x')\n    print('written')\nexcept OSError as e:\n    print('refused:', " \
            "type(e).__name__)"
    try:
        for target in (tmp_path / "stray.txt", given / "stray.txt", "/tmp/owl-memory-stray.txt"):
            assert box.execute(write.format(str(target))).strip().startswith("refused:"), target
        assert box.execute(write.format("notes.txt")).strip() == "written"  # cwd is the scratch folder
        assert box.execute("import tempfile\nprint(tempfile.mkstemp()[1])").strip().startswith("/scratch/")
    finally:
        box.shutdown()
    assert not (tmp_path / "stray.txt").exists() and not (given / "stray.txt").exists()
    assert not os.path.exists("/tmp/owl-memory-stray.txt")
    assert (scratch / "notes.txt").read_text() == "x"


def test_a_scratch_folder_it_made_is_removed_at_shutdown():
    box = BwrapInterpreter()
    box.execute("open('a.txt', 'w').write('x')")
    folder = box.scratch
    assert (folder / "a.txt").exists()
    box.shutdown()
    assert not folder.exists()


def test_an_agent_run_in_the_sandbox_still_uses_host_tools(tmp_path, listener):
    port, accepted = listener
    lm = DummyLM([
        {"reasoning": "look", "code": "s = ontology_stats()\nw = prompt_window(0, 12)\nprint(s['triples'], w['text'])"},
        {"reasoning": "net", "code": CONNECT.format(port=port)},
        {"reasoning": "done", "code": "SUBMIT(answer=f\"{s['classes']} classes; {w['text']}\")"},
    ])
    result = run("How many classes?", prompt="Answer tersely, please.", ontology=shipped("ontology", "owl-memory.ttl"),
                 lm=lm, condition="A0", sandbox=Sandbox(), trajectory_dir=tmp_path)
    assert result.answer.endswith("classes; Answer terse")
    assert int(result.answer.split()[0]) > 5
    assert result.metrics.tool_calls == 2 and result.metrics.tool_errors == 0
    lines = result.trajectory_path.read_text(encoding="utf-8")
    assert '"interpreter": "Sandbox"' in lines and "refused:" in lines
    assert accepted == []


def test_a_busy_loop_is_stopped_by_the_cpu_limit_and_the_next_step_runs():
    box = BwrapInterpreter(cpu_seconds=1, execution_timeout=None)  # no wall limit: only CPU can stop it
    try:
        box.execute("x = 1")
        with pytest.raises(CodeExecutionError, match="more than 1 CPU seconds"):
            box.execute("while True:\n    pass")
        assert box.execute("print('alive', 'x' in globals())").strip() == "alive False"  # a fresh worker
    finally:
        box.shutdown()


def test_a_cpu_limit_the_code_tries_to_ignore_still_stops_it():
    box = BwrapInterpreter(cpu_seconds=1, execution_timeout=None)
    try:
        with pytest.raises(CodeExecutionError, match="CPU"):
            box.execute("import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass")
    finally:
        box.shutdown()


def test_a_sleeping_step_is_stopped_by_the_wall_time_limit():
    box = BwrapInterpreter(execution_timeout=1)
    try:
        with pytest.raises(CodeExecutionError, match="longer than 1 s"):
            box.execute("import time\ntime.sleep(600)")
        box.execution_timeout = 120  # the next step must not race a loaded machine
        assert box.execute("print(2 + 2)").strip() == "4"
    finally:
        box.shutdown()


def test_memory_past_the_limit_is_a_memory_error_naming_it():
    box = BwrapInterpreter(memory_bytes=256 << 20)
    try:
        with pytest.raises(CodeExecutionError, match="MemoryError.*256 MiB"):
            box.execute("x = bytearray(512 << 20)")
        assert box.execute("print(len(bytearray(1 << 20)))").strip() == "1048576"
    finally:
        box.shutdown()


def test_an_agent_busy_loop_is_an_error_for_the_model_and_the_run_goes_on(tmp_path):
    lm = DummyLM([
        {"reasoning": "spin", "code": "while True:\n    pass"},
        {"reasoning": "done", "code": "SUBMIT(answer='recovered')"},
    ])
    result = run("Spin, then answer.", prompt="p", ontology=shipped("ontology", "owl-memory.ttl"), lm=lm,
                 condition="A0", sandbox=Sandbox(cpu_seconds=1), trajectory_dir=tmp_path)
    assert result.answer == "recovered"
    lines = result.trajectory_path.read_text(encoding="utf-8")
    assert "[Error] LimitExceeded: the code used more than 1 CPU seconds" in lines
