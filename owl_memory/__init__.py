"""owl-memory: symbolic, procedural memory for strict-RLM LLM agents."""

from .blobs import BlobStore, ReadBudget, Ref
from .errors import CapExceeded, ConfigError, InvalidItem, LoadError, OwlMemoryError, UnknownItem
from .memory import Memory

__all__ = [
    "BlobStore", "CapExceeded", "ConfigError", "InvalidItem", "LoadError", "Memory", "OwlMemoryError", "ReadBudget",
    "Ref", "UnknownItem",
]
__version__ = "0.1.0"
