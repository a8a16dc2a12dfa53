"""Agent SPARQL in a worker process with a wall-time and a memory limit, killed on overrun.

The host keeps one worker per graph: a `python -m owl_memory.agent.query_worker` child that caps its own address
space (RLIMIT_AS) and CPU time (RLIMIT_CPU) before it reads anything, loads the graph once, then answers one query
per JSON line. It dies with its host: a watch thread exits the worker within PARENT_POLL seconds of the host's end,
however it ended (SIGTERM, SIGKILL), even mid-query. Each query is checked by `adapters.sparql.check_read_only` and the
checked algebra is what runs; a judge rule's parameters come as separate terms, bound into that parsed algebra
(`adapters.sparql_binding`), never into the text. The host waits at most `seconds` for an answer; past that it
kills the worker and starts a fresh one on the next query. A limit hit is a ToolError naming the limit, so the
agent sees "[Error] …".
"""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import subprocess
import sys
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any, NoReturn

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.term import Node

from ..adapters import rdflib as rdf
from ..errors import ConfigError, QueryFailed, QueryRefused, QueryTimeout, ToolError

_MEMORY_EXIT = 3  # the worker's exit status when the memory limit stopped it before it could answer
STARTUP_SECONDS = 60  # time a new worker may take to start and load the graph (not counted in a query's limit)
PARENT_POLL = 0.2  # seconds between the worker's checks that its host is still alive


class _Overrun(Exception):
    """The worker did not answer within its time (not an OSError, unlike TimeoutError)."""


@dataclass(frozen=True)
class QueryLimits:
    """The limits one agent query runs under.

    Args:
        seconds: wall time one query may take before its worker is killed.
        memory_mb: address space the worker process may use (graph, query and results together).
        max_rows: rows one query may return (more are cut and flagged truncated).
    """

    seconds: float = 10.0
    memory_mb: int = 512
    max_rows: int = 10_000

    def __post_init__(self) -> None:
        """Refuse limits that cannot work."""
        if not (self.seconds > 0 and self.memory_mb >= 64 and self.max_rows >= 1):
            raise ConfigError("query limits need seconds > 0, memory_mb >= 64 and max_rows >= 1")


@dataclass(frozen=True)
class QueryResult:
    """Rows of one query: terms as ("uri" | "bnode" | "literal", text) pairs, None where a variable is unbound."""

    kind: str  # SELECT, ASK, CONSTRUCT or DESCRIBE
    columns: tuple[str, ...] = ()
    rows: tuple[tuple, ...] = ()
    truncated: bool = False
    ask: bool | None = None


class QueryWorker:
    """The host side: one limited worker process over one graph, started on first use, restarted after a kill."""

    def __init__(self, graph: Graph, limits: QueryLimits | None = None):
        """A worker over `graph` under `limits` (QueryLimits() by default); its process starts on the first query."""
        self.graph, self.limits = graph, limits or QueryLimits()
        self._proc: subprocess.Popen[bytes] | None = None
        self._buffer = b""

    def query(self, sparql: str, bindings: dict[URIRef, URIRef | Literal] | None = None) -> QueryResult:
        """Run one read-only query under the limits, with `bindings` (placeholder IRI -> RDF term) bound into its
        parsed form; QueryRefused or ToolError (naming the limit hit) otherwise."""
        from ..adapters.sparql import check_read_only

        check_read_only(sparql)  # refuse here too, before a worker is started for nothing
        pairs = [[str(k), *_term_json(v)] for k, v in sorted((bindings or {}).items())]
        reply = self._ask({"query": sparql, "max_rows": self.limits.max_rows, "bindings": pairs})
        if "refused" in reply:
            raise QueryRefused(reply["refused"])
        if "failed" in reply:
            raise ToolError(f"the query failed ({reply['failed']}); fix the SPARQL and retry, declaring every "
                            "PREFIX you use", cause="query-failed")
        if "memory" in reply:
            self.close()
            raise ToolError(self._memory_message(), cause="memory-limit")
        if "timeout" in reply:  # the worker's own wall time, the same limit as the host's wait
            raise ToolError(self._time_message(), cause="timeout")
        r = reply["ok"]
        return QueryResult(r["kind"], tuple(r["columns"]), tuple(tuple(_decode(v) for v in row) for row in r["rows"]),
                           r["truncated"], r.get("ask"))

    def close(self) -> None:
        """Stop the worker (a new one starts on the next query)."""
        if self._proc is not None:
            _kill(self._proc)
            self._proc, self._buffer = None, b""

    def _ask(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send one message and wait for the answer within the wall-time limit."""
        proc = self._worker()
        try:
            _send(proc, message)
            line = self._read_line(proc, self.limits.seconds)
        except OSError:
            return self._died(proc)
        except _Overrun:
            self.close()
            raise ToolError(self._time_message(), cause="timeout") from None
        return json.loads(line)

    def _worker(self) -> subprocess.Popen[bytes]:
        """The running worker, started (graph sent once, then its "ready" line awaited) when there is none."""
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        proc = self._proc = _start(self.limits)
        self._buffer = b""
        weakref.finalize(self, _kill, proc)
        graph = {"namespaces": {p: str(ns) for p, ns in self.graph.namespaces()},
                 "ntriples": self.graph.serialize(format="nt")}
        try:
            _send(proc, graph)
            self._read_line(proc, STARTUP_SECONDS)
        except OSError:
            self._died(proc)
        except _Overrun:
            self.close()
            raise ToolError(f"the query worker did not load the ontology within {STARTUP_SECONDS} s") from None
        return proc

    def _read_line(self, proc: subprocess.Popen[bytes], seconds: float) -> bytes:
        """One line from the worker within `seconds`; _Overrun past that, OSError when the worker is gone."""
        assert proc.stdout is not None  # _start opens every worker's stdout as a pipe
        fd, deadline = proc.stdout.fileno(), time.monotonic() + seconds
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise _Overrun
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise OSError("the query worker closed its output")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def _died(self, proc: subprocess.Popen[bytes]) -> NoReturn:
        """The worker `proc` is gone without an answer: say which limit stopped it."""
        self._proc = None
        try:
            code = proc.wait(timeout=2)
        except subprocess.TimeoutExpired:  # output closed but still exiting: a worker out of memory can hang here
            _kill(proc)
            code = proc.returncode
        if code in (_MEMORY_EXIT, -signal.SIGKILL, -signal.SIGABRT):
            raise ToolError(self._memory_message(), cause="memory-limit")
        if code == -signal.SIGXCPU:
            raise ToolError(self._time_message(), cause="timeout")
        raise ToolError(f"the query worker stopped (exit status {code}); retry with a smaller query")

    def _time_message(self) -> str:
        """The [Error] text for a query that ran past the wall-time limit."""
        return (f"the query ran past the wall-time limit of {self.limits.seconds:g} s and was stopped; add LIMIT, "
                "avoid cross products (every pattern should share a variable) and filter early")

    def _memory_message(self) -> str:
        """The [Error] text for a query that hit the memory limit."""
        return (f"the query hit the memory limit of {self.limits.memory_mb} MB and was stopped; add LIMIT, avoid "
                "cross products and ORDER BY over large results")


def _start(limits: QueryLimits) -> subprocess.Popen[bytes]:
    """A fresh worker process under the given limits."""
    cmd = [sys.executable, "-m", "owl_memory.agent.query_worker", str(limits.memory_mb), str(limits.seconds),
           str(os.getpid())]
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            close_fds=True)


def _send(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    """Write one JSON line to a worker and flush it (OSError when the worker is gone)."""
    assert proc.stdin is not None  # _start opens every worker's stdin as a pipe
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """Kill a worker and reap it."""
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    for stream in (proc.stdin, proc.stdout):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass


def _encode(term: Node | None) -> list[str] | None:
    """An RDF term as a JSON pair."""
    if term is None:
        return None
    kind = "uri" if isinstance(term, URIRef) else "bnode" if isinstance(term, BNode) else "literal"
    return [kind, str(term)]


def _term_json(term: URIRef | Literal) -> list[str | None]:
    """A bound term as JSON: kind, text, language and datatype."""
    if isinstance(term, URIRef):
        return ["uri", str(term), None, None]
    return ["literal", str(term), term.language, str(term.datatype) if term.datatype else None]


def _bindings(pairs: list[list[Any]] | None) -> dict[URIRef, URIRef | Literal]:
    """Placeholder IRI -> RDF term, from the JSON of `_term_json` pairs (as the worker reads them off its stdin)."""
    return {URIRef(k): URIRef(text) if kind == "uri" else Literal(text, lang=lang, datatype=datatype)
            for k, kind, text, lang, datatype in pairs or ()}


def _decode(value: list[str] | None) -> tuple[str, str] | None:
    """A JSON pair back as a (kind, text) tuple."""
    return None if value is None else (value[0], value[1])


# ---- the worker process ------------------------------------------------------------------------------------


def _limit_self(memory_mb: int) -> None:
    """Cap this process's address space before it reads anything."""
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    soft = memory_mb << 20
    resource.setrlimit(resource.RLIMIT_AS, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))


def _limit_cpu(seconds: float) -> None:
    """Let this process use at most `seconds` more CPU time (plus slack): an orphaned worker cannot run on."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = int(used.ru_utime + used.ru_stime + seconds) + 2
    resource.setrlimit(resource.RLIMIT_CPU, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))


def _die_with(host: int) -> None:
    """Exit this worker as soon as its host process `host` is gone (it is then no longer our parent)."""
    def watch() -> None:
        while os.getppid() == host:
            time.sleep(PARENT_POLL)
        os._exit(1)  # mid-query: no cleanup to wait for, nobody to answer

    threading.Thread(target=watch, name="host-watch", daemon=True).start()


def _run(graph: Graph, sparql: str, max_rows: int, bindings: dict[URIRef, URIRef | Literal] | None = None,
         seconds: float | None = None) -> dict:
    """Evaluate the checked algebra of one query (`bindings` bound into it) within `seconds`; rows capped at
    max_rows."""
    from ..adapters.sparql import check_read_only, evaluate
    from ..adapters.sparql_binding import bind_terms

    answer = evaluate(graph, bind_terms(check_read_only(sparql), bindings or {}), max_rows=max_rows,
                      seconds=seconds)
    if answer.kind == "ASK":
        return {"kind": "ASK", "columns": [], "rows": [], "truncated": False, "ask": answer.ask}
    return {"kind": answer.kind, "columns": list(answer.columns), "rows": [[_encode(v) for v in row]
                                                                          for row in answer.rows],
            "truncated": answer.truncated}


def _answer(graph: Graph, message: dict[str, Any], seconds: float) -> dict[str, Any]:
    """The reply to one query message."""
    _limit_cpu(seconds)
    try:
        return {"ok": _run(graph, message["query"], int(message["max_rows"]), _bindings(message.get("bindings")),
                           seconds)}
    except QueryTimeout:
        return {"timeout": True}
    except QueryRefused as e:
        return {"refused": str(e)}
    except MemoryError:
        return {"memory": True}
    except QueryFailed as e:
        return {"failed": str(e)}


def main(argv: list[str]) -> int:
    """Worker entry point: limit self, watch the host, load the graph from the first line, answer one query per
    line."""
    _limit_self(int(argv[0]))
    seconds = float(argv[1])
    _die_with(int(argv[2]))
    try:
        init = json.loads(sys.stdin.buffer.readline())
        graph = Graph()
        for prefix, ns in init["namespaces"].items():
            graph.bind(prefix, ns, override=True, replace=True)
        rdf.parse_text(init["ntriples"], "nt", graph=graph)
        del init
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        for line in sys.stdin.buffer:
            reply = json.dumps(_answer(graph, json.loads(line), seconds))
            sys.stdout.write(reply + "\n")
            sys.stdout.flush()
    except MemoryError:
        os._exit(_MEMORY_EXIT)  # no interpreter shutdown: it may need memory there is none of
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
