"""owl-memory: symbolic, procedural memory for strict-RLM LLM agents."""

from .agent.runner import RLM, RunResult, run
from .agent.tools import OwlTool, tools
from .errors import CapExceeded, ConfigError, InvalidItem, LoadError, OwlMemoryError, ToolError, UnknownItem
from .store.blobs import BlobStore, ReadBudget, Ref
from .store.items import ItemSpec
from .store.memory import Memory

__all__ = [
    "RLM", "BlobStore", "CapExceeded", "ConfigError", "InvalidItem", "ItemSpec", "LoadError", "Memory",
    "OwlMemoryError", "OwlTool", "ReadBudget", "Ref", "RunResult", "ToolError", "UnknownItem", "run", "tools",
]
__version__ = "0.1.0"
