"""Run trajectories: one JSON object per line, each validated against schemas/trajectory.schema.json."""

from __future__ import annotations

import json
import re
import threading
import time
from functools import cache
from pathlib import Path

import jsonschema

from ..errors import InvalidItem, LoadError
from ..resources import shipped

SCHEMA_NAME = "trajectory.schema.json"
_SURROGATE = re.compile(r"[\ud800-\udfff]")


@cache
def schema() -> dict:
    """The trajectory line schema (shipped as owl_memory.schemas)."""
    return json.loads(shipped("schemas", SCHEMA_NAME).read_text(encoding="utf-8"))


@cache
def _validator() -> jsonschema.Draft202012Validator:
    """A compiled validator for trajectory lines."""
    return jsonschema.Draft202012Validator(schema())


def validate_event(event: dict) -> None:
    """Raise InvalidItem naming the first schema violation of one trajectory line."""
    error = next(iter(sorted(_validator().iter_errors(event), key=lambda e: list(e.path))), None)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(line)"
        raise InvalidItem(f"trajectory {event.get('event')!r} event is invalid at {where}: {error.message[:200]}; "
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

    def write(self, event: str, **fields) -> dict:
        """Validate and append one event line; returns the line as written."""
        with self._lock:
            line = {"event": event, "run_id": self.run_id, "seq": self.seq, "ts": round(time.time(), 3), **fields}
            if event in ("tool_call", "tool_result") and "iteration" not in line:
                line["iteration"] = self.iteration
            validate_event(line)
            self._file.write(_json_line(line) + "\n")
            self._file.flush()
            self.seq += 1
            return line

    def observe(self, event: dict) -> None:
        """Observer for Toolbox: writes its tool_call / tool_result events."""
        fields = {k: v for k, v in event.items() if k != "event"}
        self.write(event["event"], **fields)

    def close(self) -> None:
        """Close the file."""
        self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _json_line(event: dict) -> str:
    """One JSON line, UTF-8 safe: lone surrogates become \\u escapes, so json.loads gives the exact strings back."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(event, ensure_ascii=False, default=str))


def read_trajectory(path: str | Path) -> list[dict]:
    """All events of a trajectory file; LoadError names the line that is not valid JSON or fails the schema."""
    events = []
    for n, text in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        try:
            event = json.loads(text)
            validate_event(event)
        except (json.JSONDecodeError, InvalidItem) as e:
            raise LoadError(f"not a valid trajectory line: {str(e)[:200]}", source=str(path), line=n) from e
        events.append(event)
    return events


def trajectory_folder(where, memory) -> Path:
    """Where trajectories go: the given folder, else <memory>/runs, else ./.owl-memory/runs."""
    if where is not None:
        return Path(where)
    local = memory is not None and not str(memory.location).startswith(("http://", "https://"))
    return (Path(memory.location) if local else Path(".owl-memory")) / "runs"
