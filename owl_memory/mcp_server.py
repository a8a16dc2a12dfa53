"""`owl-memory mcp`: the capped tool surface served over MCP (stdio) with the official `mcp` SDK.

The tools are the Toolbox's own (memory search / get / window / query, ontology tools, handle and results reads),
called through the same guard as in a dspy run: every return fits MAX_RETURN characters, every payload read is
capped and charged to the session's read budget, and a recoverable failure is an "[Error] …" text that says what to
do instead. There is no hidden prompt over MCP, so the prompt_* tools are left out.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent

from .agent import OwlTool, Toolbox, dumps, is_error
from .store import Memory, ReadBudget

PROMPT_TOOLS = {"prompt_stats", "prompt_window", "prompt_find"}
SESSION_READ_BUDGET = 200_000  # characters all reads of one MCP session may return together
SESSION_CALLS = 10_000  # tool calls one MCP session may make
INSTRUCTIONS = ("owl-memory: procedural memory items and an ontology behind capped tools. Search memory with "
                "memory_search, read an item with memory_get and memory_window, query with memory_query / "
                "ontology_query (results handle; read rows with results_peek). A result starting with [Error] "
                "says what to do instead.")


def build_server(memory: Memory | None = None, ontology: str | Path | None = None, *,
                 read_budget: int = SESSION_READ_BUDGET, max_calls: int = SESSION_CALLS) -> MCPServer:
    """An MCP server whose tools are the capped owl-memory tools over `memory` (a Memory) and `ontology`."""
    box = Toolbox(memory, None, ontology, ReadBudget(total_chars=read_budget), max_calls=max_calls)
    server = MCPServer("owl-memory", instructions=INSTRUCTIONS, version=version("owl-memory"))
    for tool in box.functions():
        if tool.name not in PROMPT_TOOLS:
            server.add_tool(_text_tool(tool), name=tool.name, description=tool.desc, structured_output=False)
    return server


def _text_tool(tool: OwlTool) -> Callable[..., CallToolResult]:
    """A plain function with the tool's parameters that returns its capped result as JSON text; an "[Error] …"
    text is a result with is_error set, as MCP clients expect of a failed call."""
    def call(**kwargs: object) -> CallToolResult:
        value = tool(**kwargs)
        text = value if isinstance(value, str) else dumps(value)
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=is_error(value))

    hints = typing.get_type_hints(tool.func)
    params = [p.replace(annotation=hints.get(p.name, p.annotation))
              for p in inspect.signature(tool.func).parameters.values()]
    call.__signature__ = inspect.Signature(params, return_annotation=CallToolResult)  # type: ignore[attr-defined]  # inspect.signature reads it
    call.__annotations__ = {**{p.name: p.annotation for p in params}, "return": CallToolResult}
    call.__name__, call.__doc__ = tool.name, tool.desc
    return call


def serve(memory_location: str | None, ontology: str | None) -> None:
    """Serve over stdio until the client closes the connection."""
    if memory_location is None:
        build_server(None, ontology).run("stdio")
        return
    with Memory(memory_location, create=False) as memory:  # a typo is MemoryNotFound, not a new empty memory
        build_server(memory, ontology).run("stdio")
