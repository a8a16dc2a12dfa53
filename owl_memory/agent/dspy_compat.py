"""Every dspy internal owl-memory relies on, in one file: a dspy version bump touches only this module.

dspy 3.4.1 is pinned (pyproject: dspy>=3.4.1,<3.5). What is private here: dspy.RLM's `_make_interpreter_tool`
and `_execute_iteration` hooks, dspy.Tool's `_validate_and_parse_args`, the interpreter and REPL types from
`dspy.primitives`, and the callback decorator from `dspy.utils.callback`.
"""

from __future__ import annotations

import dspy
from dspy.primitives.local_interpreter import LocalInterpreter
from dspy.primitives.repl_types import REPLEntry, REPLHistory
from dspy.utils.callback import with_callbacks

__all__ = ["HookedRLM", "LocalInterpreter", "find_deno", "format_output", "validate_tool_args", "with_callbacks"]


def validate_tool_args(tool: dspy.Tool, arguments: dict) -> dict:
    """dspy.Tool's own JSON-schema and pydantic check of keyword arguments; the parsed arguments, or ValueError."""
    return tool._validate_and_parse_args(**arguments)


def format_output(output: str, cap: int) -> str:
    """The REPL output exactly as dspy.RLM shows it to the model (head+tail cut at `cap`, with a header line)."""
    return REPLEntry.format_output(output, cap)


def find_deno() -> str:
    """The Deno executable dspy's PythonInterpreter would run."""
    from dspy.primitives.python_interpreter import _find_deno_executable

    return _find_deno_executable()


class HookedRLM(dspy.RLM):
    """dspy.RLM with two private hooks turned into plain overridable methods.

    `pass_through(tool)`: True keeps a tool object as it is in the interpreter (dspy otherwise wraps it as
    `invoke(**kwargs)`); `iteration_done(iteration, entry)` sees each iteration's entry dict
    (reasoning, code, output) after dspy ran it.
    """

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
