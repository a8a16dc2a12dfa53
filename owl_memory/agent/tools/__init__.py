"""The DSPy tool surface: capped, budgeted tools over prompt, memory, ontology and results handles.

Every tool returns a JSON-compatible value whose serialized form is at most MAX_RETURN characters, whatever its
arguments; every payload read goes through the run's ReadBudget; a recoverable failure returns a string starting
"[Error]" that says what to do instead. One module per tool family; caps.py holds the caps and argument checks,
toolbox.py the run's state and the guard every call goes through.
"""

from . import endpoint, files, memory, ontology, prompt, results  # noqa: F401  (each registers a family)
from .caps import LARGE_RETURN, MAX_ARG, MAX_CALLS, MAX_LIST, MAX_RETURN, clip, dumps
from .toolbox import OwlTool, Toolbox, ToolFamily, family, tools

__all__ = ["LARGE_RETURN", "MAX_ARG", "MAX_CALLS", "MAX_LIST", "MAX_RETURN", "OwlTool", "ToolFamily", "Toolbox",
           "clip", "dumps", "family", "tools"]
