"""owl-memory: symbolic, procedural memory for strict-RLM LLM agents.

Names are imported on first use (PEP 562), so `import owl_memory.errors` or a CLI command that runs no LM
never loads dspy or litellm.
"""

from importlib import import_module

_EXPORTS = {
    "BlobStore": ".store.blobs", "ReadBudget": ".store.blobs", "Ref": ".model", "ItemSpec": ".model", "Item": ".model",
    "Hit": ".model", "Window": ".model", "OntologyContext": ".model", "ontology_context": ".store.alignment",
    "CapExceeded": ".errors", "ConfigError": ".errors", "InvalidItem": ".errors", "LoadError": ".errors",
    "OwlMemoryError": ".errors", "ToolError": ".errors", "UnknownItem": ".errors",
    "Memory": ".store.memory",
    "MemoryAccess": ".model", "RunConfig": ".model", "RunResult": ".model",
    "run_sprint": ".construction.sprint", "run_agentic_sprint": ".llm.agent_sprint",
    "RLM": ".agent.runner", "LearnedRun": ".learning.loop", "run": ".learning.loop",
    "OwlTool": ".agent.tools", "tools": ".agent.tools",
    "ablate": ".ablation.harness",
}
__all__ = sorted(_EXPORTS)
__version__ = "0.1.0"


def __getattr__(name: str):
    """Import a public name from its module the first time it is used."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'owl_memory' has no attribute {name!r}")
    value = getattr(import_module(_EXPORTS[name], __name__), name)
    globals()[name] = value
    return value


def __dir__():
    """The public names, for tab completion."""
    return sorted([*globals(), *_EXPORTS])
