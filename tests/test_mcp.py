"""`owl-memory mcp` answers the official MCP SDK's stdio client with the capped tools and [Error] rules."""

import asyncio
import json
import os
import signal
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, InitializeResult
from test_ablation_signals import alive, descendants

from owl_memory import ItemSpec, Memory, __version__
from owl_memory.agent.tools import MAX_RETURN
from owl_memory.resources import shipped

ONTOLOGY = str(shipped("ontology", "owl-memory.ttl"))
CONTENT = "Bind every value with VALUES and escaped literals; never paste user text into a query. " * 40


async def _session(memory: str, calls: list[tuple[str, dict]]) -> tuple[InitializeResult, set[str], list]:
    """Start the server with the SDK's stdio client, list its tools, make the calls; (handshake, names, results)."""
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "owl_memory", "mcp", "--memory", memory, "--ontology", ONTOLOGY])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        hello = await session.initialize()
        names = {t.name for t in (await session.list_tools()).tools}
        return hello, names, [await session.call_tool(name, arguments) for name, arguments in calls]


def _text(result: CallToolResult) -> str:
    """The text blocks of one tool result."""
    return "".join(c.text for c in result.content if c.type == "text")


async def _session_calls(memory: str, calls: list[tuple[str, dict]]) -> tuple[set[str], list[str]]:
    """The tool names and the text of each call's result."""
    _, names, results = await _session(memory, calls)
    return names, [_text(r) for r in results]


def test_a_real_mcp_client_gets_capped_tools_and_error_texts(tmp_path, fresh_memory):
    with Memory(fresh_memory(tmp_path / "mem")) as m:
        item = m.add(ItemSpec("Principle", "Bind values, never paste", "Use when a query takes user text.", CONTENT,
                              applies_to=("http://purl.org/dc/terms/",)))
    calls = [
        ("memory_search", {"text": "bind values"}),
        ("memory_get", {"id": item}),
        ("memory_window", {"id": item, "start": 0, "length": 10**6}),
        ("memory_query", {"sparql": "SELECT ?t WHERE { ?i <http://w3id.org/owl-memory#title> ?t }"}),
        ("ontology_query", {"sparql": "SELECT ?c WHERE { ?c a <http://www.w3.org/2002/07/owl#Class> }"}),
        ("ontology_query", {"sparql": "SELECT * WHERE { \\u0053ERVICE <http://127.0.0.1:9/> { ?s ?p ?o } }"}),
        ("memory_get", {"id": "../../etc/passwd"}),
        ("ontology_classes", {"limit": 10**9}),
    ]
    names, texts = asyncio.run(_session_calls(str(tmp_path / "mem"), calls))
    assert {"memory_search", "memory_get", "memory_window", "memory_query", "ontology_stats", "ontology_classes",
            "ontology_describe", "ontology_query", "results_peek", "handle_window"} <= names
    assert not names & {"prompt_stats", "prompt_window", "prompt_find"}
    search, got, window, mq, oq, service, unknown, classes = texts
    assert [h["id"] for h in json.loads(search)["items"]] == [item]
    assert json.loads(got)["id"] == item
    assert len(json.loads(window)["text"]) == 512  # one read is capped whatever the client asks
    assert json.loads(mq)["rows"] == 1
    assert json.loads(oq)["rows"] > 5 and json.loads(oq)["handle"].startswith("sha256:")
    assert service.startswith("[Error] ontology_query: SERVICE is not allowed")
    assert unknown.startswith("[Error] memory_get:")
    assert len(classes) <= MAX_RETURN and json.loads(classes)["classes"]


def test_a_bad_k_an_error_and_the_version_reach_the_client_as_mcp_defines_them(tmp_path, fresh_memory):
    with Memory(fresh_memory(tmp_path / "mem")) as m:
        m.add(ItemSpec("Principle", "Bind values, never paste", "Use when a query takes user text.", CONTENT))
    calls = [("memory_search", {"text": "bind", "k": 0}), ("memory_search", {"text": "bind", "k": -3}),
             ("memory_search", {"text": "bind", "k": 50}), ("memory_get", {"id": "nope"})]
    hello, _, (zero, negative, many, unknown) = asyncio.run(_session(str(tmp_path / "mem"), calls))
    assert hello.server_info.name == "owl-memory" and hello.server_info.version == __version__ != ""
    for refused in (zero, negative):
        assert refused.is_error and _text(refused) == "[Error] memory_search: k must be 1 to 10, e.g. k=5"
    assert not many.is_error and json.loads(_text(many))["count"] == 1  # above the cap is capped, as listings are
    assert unknown.is_error and _text(unknown).startswith("[Error] memory_get:")


def test_sigterm_to_the_server_ends_its_query_worker_mid_query(tmp_path):
    product = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"  # runs to the 10 s limit
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "drill", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "ontology_query", "arguments": {"sparql": product}}}]
    proc = subprocess.Popen([sys.executable, "-m", "owl_memory", "mcp", "--ontology", ONTOLOGY],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        proc.stdin.flush()
        deadline, workers = time.monotonic() + 60, set()
        while not workers and time.monotonic() < deadline:
            time.sleep(0.2)
            workers = descendants(proc.pid)
        assert workers, "the query never reached a worker"
        time.sleep(1)  # the worker has loaded the graph and is inside the query
        assert all(alive(w) for w in workers)
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)
        stopped = time.monotonic()
        while any(alive(w) for w in workers) and time.monotonic() - stopped < 5:
            time.sleep(0.05)
        assert not [w for w in workers if alive(w)] and time.monotonic() - stopped < 2
    finally:
        for pid in [proc.pid, *descendants(proc.pid)]:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
