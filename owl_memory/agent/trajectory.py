"""Run trajectories: one typed event (model/events.py) per JSON line, each validated against
schemas/trajectory.schema.json."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidItem, LoadError
from ..model import AgentQuery, Event, RunComplete, RunStart, ToolCall, ToolResult, event_from_dict
from ..resources import schema_error

if TYPE_CHECKING:
    from ..store import Memory

SCHEMA_NAME = "trajectory.schema.json"
_SURROGATE = re.compile(r"[\ud800-\udfff]")
RUN_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")  # a run id, as the trajectory schema has it


def validate_event(line: dict[str, Any]) -> None:
    """Raise InvalidItem naming the first schema violation of one trajectory line."""
    error = schema_error(SCHEMA_NAME, line)
    if error is not None:
        raise InvalidItem(f"trajectory {line.get('event')!r} event is invalid at {error}; "
                          "this is a bug in the writer, please report it")


class Trajectory:
    """Append-only JSONL writer for one run; every line validates before it is written (thread-safe).

    Args:
        path: the .jsonl file; its folder is created when missing.
        run_id: the run's id, put on every line.
    """

    def __init__(self, path: str | Path, run_id: str):
        self.path, self.run_id, self.seq = Path(path), run_id, 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("a", encoding="utf-8")
        self._lock = threading.Lock()
        self.iteration = 0
        self.events: list[Event] = []  # what this writer wrote, as written

    def write(self, event: Event) -> Event:
        """Stamp one event (run id, sequence number, time; a tool event's iteration when it has none), validate it
        and append it as a line; returns the event as written. Also the Toolbox's observer."""
        with self._lock:
            stamped = replace(event, run_id=self.run_id, seq=self.seq, ts=round(time.time(), 3))
            if isinstance(stamped, ToolCall | ToolResult | AgentQuery) and stamped.iteration is None:
                stamped = replace(stamped, iteration=self.iteration)
            line = stamped.to_dict()
            validate_event(line)
            self._file.write(_json_line(line) + "\n")
            self._file.flush()
            self.seq += 1
            self.events.append(stamped)
            return stamped

    def close(self) -> None:
        """Close the file."""
        self._file.close()

    def __enter__(self) -> Trajectory:
        """The trajectory, open for writing."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the file."""
        self.close()


def _json_line(event: dict[str, Any]) -> str:
    """One JSON line, UTF-8 safe: lone surrogates become \\u escapes, so json.loads gives the exact strings back."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(event, ensure_ascii=False, default=str))


def read_trajectory(path: str | Path) -> list[Event]:
    """All events of a trajectory file, typed; LoadError names the line that is not valid JSON or fails the schema."""
    events = []
    for n, text in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        try:
            line = json.loads(text)
            validate_event(line)
        except (json.JSONDecodeError, InvalidItem) as e:
            raise LoadError(f"not a valid trajectory line: {str(e)[:200]}", source=str(path), line=n) from e
        events.append(event_from_dict(line))
    return events


ANSWERING_TOOLS = ("ontology_query", "endpoint_query")  # the agent's queries over its data (memory_query is not)


def agent_queries(events: Iterable[Event]) -> list[AgentQuery]:
    """The queries the agent ran over its ontology or endpoints, in order (the agent_query events)."""
    return [e for e in events if isinstance(e, AgentQuery) and e.tool in ANSWERING_TOOLS]


def answering_query(events: Iterable[Event]) -> AgentQuery | None:
    """The query that produced the run's answer: among the queries that answered, the one whose results the agent
    read last (results_peek), else the last one to answer; when none answered, the last that failed; None when the
    run ran no query."""
    events = list(events)
    queries = agent_queries(events)
    answered = {q.handle: q for q in queries if q.error is None and q.handle}
    for handle in reversed(_peeked(events)):
        if handle in answered:
            return answered[handle]
    return next((q for q in reversed(queries) if q.error is None), queries[-1] if queries else None)


def _peeked(events: list[Event]) -> list[str]:
    """The results handles the agent read with results_peek, in order."""
    calls = [e.args for e in events if isinstance(e, ToolCall) and e.tool == "results_peek"]
    handles = [a.keyword.get("handle", a.positional[0] if a.positional else None) for a in calls]
    return [h for h in handles if isinstance(h, str)]


def trajectory_folder(where: str | Path | None, memory: Memory | None) -> Path:
    """Where trajectories go: the given folder, else <memory>/runs, else ./.owl-memory/runs."""
    if where is not None:
        return Path(where)
    if memory is not None and not str(memory.location).startswith(("http://", "https://")):
        return Path(memory.location) / "runs"
    return Path(".owl-memory") / "runs"


def find_trajectory(run: str, memory_location: str | Path) -> Path:
    """A run's trajectory file: `run` itself when it is a .jsonl file, else <memory>/runs/RUN.jsonl for a run id
    (./.owl-memory/runs for a server memory); LoadError saying where it looked."""
    path = Path(run)
    if path.suffix == ".jsonl" and path.is_file():
        return path
    if not RUN_ID.fullmatch(run):
        raise LoadError("not a run id or a trajectory .jsonl file; `owl-memory run` prints a run's trajectory path",
                        source=run[:100])
    folder = trajectory_folder(None, None) if str(memory_location).startswith(("http://", "https://")) \
        else Path(memory_location) / "runs"
    found = folder / f"{run}.jsonl"
    if not found.is_file():
        raise LoadError(f"no trajectory of run {run} in {folder}; pass the --memory it ran with, or the .jsonl path",
                        source=run)
    return found


def run_summary(events: Iterable[Event]) -> dict[str, Any]:
    """What a person compares between runs: task, condition, model, iterations, LM calls, tokens, tool calls and
    errors, queries, memory injected and used, how it ended, its answer."""
    events = list(events)
    start = next((e for e in events if isinstance(e, RunStart)), None)
    end = next((e for e in events if isinstance(e, RunComplete)), None)
    m = end.metrics if end is not None else None
    return {"run": events[0].run_id if events else "", "task": start.task[:80] if start else "",
            "condition": start.config.condition if start else "", "lm": start.config.lm if start else "",
            "iterations": m.iterations if m else 0, "lm_calls": m.lm_calls if m else 0,
            "tokens": m.prompt_tokens + m.completion_tokens if m else 0, "tool_calls": m.tool_calls if m else 0,
            "tool_errors": m.tool_errors if m else 0,
            "queries": sum(isinstance(e, AgentQuery) for e in events),
            "memory_injected": ", ".join(start.memory_ids_injected) if start else "",
            "memory_used": ", ".join(end.memory_ids_used) if end else "",
            "status": end.status if end else "unfinished", "answer": (end.answer or "")[:120] if end else ""}
