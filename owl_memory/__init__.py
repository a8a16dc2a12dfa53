"""owl-memory: symbolic, procedural memory for strict-RLM LLM agents."""

from .blobs import BlobStore, ReadBudget, Ref
from .errors import CapExceeded, ConfigError, InvalidItem, LoadError, OwlMemoryError, ToolError, UnknownItem
from .memory import Memory
from .runner import RLM, RunResult, run
from .tools import OwlTool, tools

__all__ = [
    "RLM", "BlobStore", "CapExceeded", "ConfigError", "InvalidItem", "LoadError", "Memory", "OwlMemoryError",
    "OwlTool", "ReadBudget", "Ref", "RunResult", "ToolError", "UnknownItem", "run", "tools",
]
__version__ = "0.1.0"
