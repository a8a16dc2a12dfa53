"""Former home of the pySHACL adapter, kept only for learning/judge.py (`shacl_runs.validate`) until it imports
owl_memory.adapters.pyshacl; delete this file then."""

from .adapters.pyshacl import validate

__all__ = ["validate"]
