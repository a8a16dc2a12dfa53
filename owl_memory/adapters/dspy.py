"""Every dspy internal owl-memory relies on, in one file: a dspy version bump touches only this module; litellm, which
dspy calls the providers through, is reached only from here too.

dspy 3.4.1 is pinned (pyproject: dspy>=3.4.1,<3.5). What is private here: dspy.RLM's `_make_interpreter_tool`,
`_execute_iteration` and `_prepare_execution_tools` hooks, dspy.Tool's `_validate_and_parse_args`,
PythonInterpreter's `_extract_parameters`, the interpreter and REPL types from `dspy.primitives`, LocalInterpreter's
worker script and private start-up helpers, the callback decorator from `dspy.utils.callback`, the layout of an LM's
history entries (read into model.LmCall here and nowhere else) and litellm's `model_cost` price map.

dspy loads litellm at an LM's first call. litellm downloads its price map when it is imported, retrying for ~10 s
without a network, unless LITELLM_LOCAL_MODEL_COST_MAP tells it to read the copy it ships: `use_local_prices` sets
that (a value the user set is kept) whenever an LM is built, an RLM is made or a price is looked up, never on import.
"""

from __future__ import annotations

import contextlib
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path

import dspy
from dspy.primitives import local_interpreter
from dspy.primitives.code_interpreter import CodeExecutionError, CodeInterpreterError
from dspy.primitives.local_interpreter import LocalInterpreter
from dspy.primitives.repl_types import REPLEntry, REPLHistory
from dspy.utils.callback import with_callbacks

from ..model import LmCall

__all__ = ["CodeExecutionError", "CodeInterpreterError", "CommandInterpreter", "HookedRLM", "LocalInterpreter",
           "calls_before", "calls_of", "calls_since", "dspy", "execution_tools", "format_output", "language_model",
           "price", "stub_parameters", "use_local_prices", "validate_tool_args", "with_callbacks"]

WORKER_SCRIPT = Path(local_interpreter.__file__).with_name("local_interpreter_worker.py")  # stdlib-only


def use_local_prices() -> None:
    """Make litellm read the price map it ships, not download one (see the module docstring); call it before
    anything may load litellm."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def language_model(model: str, **kwargs) -> dspy.LM:
    """dspy.LM for a litellm model string (no cache; `kwargs` as dspy.LM takes them), litellm told to use its local
    price map first."""
    use_local_prices()
    return dspy.LM(model, cache=False, engine="litellm", **kwargs)


def price(model: str) -> tuple[float, float] | None:
    """US dollars per prompt token and per completion token from litellm's local price map (by the model string or
    its name after the provider); None when the map has no price for it."""
    use_local_prices()
    import litellm

    entry = litellm.model_cost.get(model) or litellm.model_cost.get(model.split("/", 1)[-1]) or {}
    prompt, completion = entry.get("input_cost_per_token"), entry.get("output_cost_per_token")
    return (float(prompt), float(completion)) if prompt is not None and completion is not None else None


def calls_before(lm) -> set:
    """A mark of the LM's history before a run: the identities of the entries it holds (none for None)."""
    return {id(e) for e in getattr(lm, "history", None) or []}


def calls_since(lm, before: set) -> tuple[LmCall, ...]:
    """The calls the LM made since `before` (dspy keeps a bounded history, so identities are compared, not
    indexes)."""
    return calls_of(e for e in getattr(lm, "history", None) or [] if id(e) not in before)


def calls_of(history: Iterable[dict]) -> tuple[LmCall, ...]:
    """dspy LM history entries (lm.history) as LmCalls."""
    return tuple(_call(e) for e in history)


def _call(entry: dict) -> LmCall:
    """One history entry as an LmCall: a bare prompt (no messages) becomes one user message."""
    messages, prompt = entry.get("messages"), entry.get("prompt")
    bare = messages is None and prompt is not None
    sent = [{"role": "user", "content": prompt}] if bare else messages or []
    usage = entry.get("usage") or {}
    return LmCall(tuple((str(m.get("role", "user")), _text(m.get("content"))) for m in sent), bare,
                  int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0), entry.get("cost"))


def _text(content) -> str:
    """The text of a message content: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return "" if content is None else str(content)


def validate_tool_args(tool: dspy.Tool, arguments: dict) -> dict:
    """dspy.Tool's own JSON-schema and pydantic check of keyword arguments; the parsed arguments, or ValueError."""
    return tool._validate_and_parse_args(**arguments)


def execution_tools(rlm: dspy.RLM) -> dict:
    """The callables an RLM hands its interpreter (llm_query, ..., and each tool as the interpreter sees it)."""
    return rlm._prepare_execution_tools()


def stub_parameters(interpreter: dspy.PythonInterpreter, name: str) -> list[dict]:
    """The parameters ({name, type?, default?}) Deno's PythonInterpreter declares in its stub for tool `name`."""
    return interpreter._extract_parameters(interpreter.tools[name])


def format_output(output: str, cap: int) -> str:
    """The REPL output exactly as dspy.RLM shows it to the model (head+tail cut at `cap`, with a header line)."""
    return REPLEntry.format_output(output, cap)


class HookedRLM(dspy.RLM):
    """dspy.RLM with two private hooks turned into plain overridable methods.

    `pass_through(tool)`: True keeps a tool object as it is in the interpreter (dspy otherwise wraps it as
    `invoke(**kwargs)`); `iteration_done(iteration, entry)` sees each iteration's entry dict
    (reasoning, code, output) after dspy ran it.
    """

    def __init__(self, *args, **kwargs):
        """dspy.RLM's own, litellm told to use its local price map first (the run's LM may load it)."""
        use_local_prices()
        super().__init__(*args, **kwargs)

    def pass_through(self, tool) -> bool:
        """Whether the interpreter gets `tool` itself rather than dspy's keyword-only wrapper."""
        return False

    def iteration_done(self, iteration: int, entry: dict) -> None:
        """Called after each iteration with its entry; does nothing unless overridden."""

    def _make_interpreter_tool(self, tool):
        """dspy's hook: the callable the interpreter sees for `tool`."""
        return tool if self.pass_through(tool) else super()._make_interpreter_tool(tool)

    def _execute_iteration(self, repl, variables, history, iteration, *args, **kwargs):
        """dspy's hook: run one iteration as dspy does, then report its entry to iteration_done."""
        result = super()._execute_iteration(repl, variables, history, iteration, *args, **kwargs)
        entry = result.entries[-1] if isinstance(result, REPLHistory) else result.trajectory[-1]
        self.iteration_done(iteration, entry if isinstance(entry, dict) else entry.model_dump())
        return result


class CommandInterpreter(LocalInterpreter):
    """dspy's LocalInterpreter (persistent worker, JSON protocol, tools called back on the host) whose worker is
    started by `worker_command(script)`, so a subclass can run it under a sandbox."""

    start_seconds = 30  # a worker that has not said "ready" by then is a failed start
    _process: subprocess.Popen | None  # LocalInterpreter's: the running worker
    _responses: queue.Queue[str | None]  # LocalInterpreter's: the worker's output lines (None: it ended)

    def worker_command(self, script: Path) -> list[str]:
        """The command that runs dspy's worker script; LocalInterpreter's own by default."""
        return [sys.executable, "-I", str(script)]

    @staticmethod
    def _read_into(process: subprocess.Popen, responses: queue.Queue) -> None:
        """dspy's reader thread, writing to this worker's own queue (a restarted worker gets a fresh one)."""
        assert process.stdout is not None  # start() opens the worker's stdout as a pipe
        with contextlib.suppress(OSError, ValueError):  # stdout closed under it: the worker was killed
            for line in process.stdout:
                responses.put(line)
        responses.put(None)

    def limit_worker(self) -> None:
        """Runs in the worker's process before it starts (resource limits go here); sets none by default."""

    @with_callbacks
    def start(self) -> None:
        """Start the worker (as LocalInterpreter.start does, with our command), or return if it is running."""
        if self._ended:
            raise CodeInterpreterError("this interpreter session has been shut down")
        if self._process is not None:
            return
        try:
            process = subprocess.Popen(self.worker_command(WORKER_SCRIPT), stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True,
                                       text=True, preexec_fn=self.limit_worker)
        except OSError as exc:
            raise CodeInterpreterError(f"unable to start the Python worker: {exc}") from exc
        self._process, self._responses = process, queue.Queue()
        threading.Thread(target=self._read_into, args=(process, self._responses), daemon=True).start()
        message = self._receive(time.monotonic() + self.start_seconds,
                                f"the Python worker did not start within {self.start_seconds} s")
        if message.get("type") != "ready":
            self._raise_terminal_error(f"the Python worker sent an invalid start-up message: {message!r}")
