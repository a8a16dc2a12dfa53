"""owl-memory: symbolic, procedural memory for strict-RLM LLM agents.

The public names are those of `__init__.pyi`, imported on first use (owl_memory/lazy.py), so `import
owl_memory.errors` or a CLI command that runs no LM never loads dspy or litellm.
"""

from .lazy import front_door

__version__ = "0.1.0"
__all__, __getattr__, __dir__ = front_door(__name__, __file__)
