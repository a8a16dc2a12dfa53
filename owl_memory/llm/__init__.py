"""Everything that asks a language model and is not the agent runner: the LLM proposer (proposer.py) and the LLM
repair proposer (repair_proposer.py), both strict-RLM runs over the capped tools (tool_runs.py) answering in Turtle
(turtle.py); the LLM judge (judge.py); the LLM extractor's drafts (drafts.py). dspy is imported only when a model is
asked.

The public names are those of `__init__.pyi`, imported on first use (owl_memory/lazy.py).
"""

from ..lazy import front_door

__all__, __getattr__, __dir__ = front_door(__name__, __file__)
