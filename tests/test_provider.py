"""The real provider path: `owl-memory run --lm openai/… --api-base` through litellm to a scripted local server."""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm must not fetch its price list (no network)

import json  # noqa: E402
import threading  # noqa: E402
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer  # noqa: E402

import pytest  # noqa: E402
from click.testing import CliRunner  # noqa: E402

from owl_memory.agent.trajectory import read_trajectory  # noqa: E402
from owl_memory.cli import main  # noqa: E402
from owl_memory.model import RunComplete, RunStart  # noqa: E402

SECRET = "Zq9-hidden-prompt-line that the model must only see in windows. "


def action(reasoning: str, code: str) -> str:
    """A completion in the exact format dspy's ChatAdapter parses for an RLM action."""
    return (f"[[ ## reasoning ## ]]\n{reasoning}\n\n[[ ## code ## ]]\n```python\n{code}\n```\n\n"
            "[[ ## completed ## ]]")


class ScriptedServer:
    """A tiny OpenAI-compatible chat-completions server on 127.0.0.1 that replays scripted completions.

    With `respond`, each completion is respond(request body) instead: a script that answers by what it is asked,
    so requests from parallel processes get the same replies whatever their order.
    """

    def __init__(self, completions: list[str], respond=None):
        self.completions, self.requests, self.respond = list(completions), [], respond
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's naming)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"path": self.path, "body": body})
                text = server.next(body)
                self._send(200, {"id": f"chatcmpl-{len(server.requests)}", "object": "chat.completion",
                                 "created": 1700000000, "model": body.get("model", "scripted"),
                                 "choices": [{"index": 0, "finish_reason": "stop",
                                              "message": {"role": "assistant", "content": text}}],
                                 "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}})

            def _send(self, status, payload):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def next(self, body: dict) -> str:
        """The reply to one request: respond(body), else the next scripted completion, else a SUBMIT."""
        if self.respond is not None:
            return self.respond(body)
        return self.completions.pop(0) if self.completions else action("out", "SUBMIT(answer='?')")

    @property
    def base(self) -> str:
        """The api_base URL of this server."""
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def prov(shared_data):
    """Path of the real PROV-O ontology."""
    return shared_data / "ontologies" / "prov-o.ttl"


def test_cli_run_through_litellm_against_a_local_openai_compatible_server(prov, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    prompt = tmp_path / "prompt.txt"
    prompt.write_text(SECRET * 400, encoding="utf-8")
    script = [
        action("Find the subclasses.", "d = ontology_describe('prov:Entity')\nprint(sorted(d['subclasses']))"),
        action("Check the prompt size, positionally.", "print(prompt_window(0, 5)['text'], prompt_stats()['size'])"),
        action("Submit.", "SUBMIT(answer=', '.join(s.rsplit('#', 1)[1] for s in sorted(d['subclasses'])))"),
    ]
    with ScriptedServer(script) as server:
        res = CliRunner().invoke(main, ["run", "What are the direct subclasses of prov:Entity?", "--prompt-file",
                                        str(prompt), "--ontology", str(prov), "--lm", "openai/scripted-model",
                                        "--api-base", server.base, "--memory", str(tmp_path / "mem"), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["answer"] == "Bundle, Collection, Plan"
    assert len(server.requests) == 3 and all(r["path"] == "/v1/chat/completions" for r in server.requests)
    assert all(r["body"]["model"] == "scripted-model" for r in server.requests)
    sent = json.dumps([r["body"]["messages"] for r in server.requests])
    assert SECRET not in sent and "Zq9-h" in sent  # only the 5-character window reached the provider
    m = out["metrics"]
    assert m["lm_calls"] == 3 and m["prompt_tokens"] == 300 and m["completion_tokens"] == 30
    assert m["payload_chars_in_history"] == 0  # 5 characters are below the 16-character detection floor
    events = read_trajectory(out["trajectory"])
    start, end = events[0], events[-1]
    assert isinstance(start, RunStart) and start.config.lm == "openai/scripted-model"
    assert isinstance(end, RunComplete) and end.status == "ok"


def test_cli_run_reports_a_failing_provider_with_exit_1(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ScriptedServer([]) as server:
        server.completions = ["this is not in the adapter's format"] * 20
        res = CliRunner().invoke(main, ["run", "anything", "--lm", "openai/scripted-model", "--api-base",
                                        server.base, "--memory", str(tmp_path / "mem"), "--max-iters", "1"])
    assert res.exit_code == 1 and "run failed" in res.output
