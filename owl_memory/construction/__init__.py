"""Ontology construction: sprints over a graph workspace, competency questions, symbolic and LLM proposers.

The public names are those of `__init__.pyi`, imported on first use (owl_memory/lazy.py).
"""

from ..lazy import front_door

__all__, __getattr__, __dir__ = front_door(__name__, __file__)
