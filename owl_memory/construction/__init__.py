"""Ontology construction: sprints over a graph workspace, competency questions, symbolic and LLM proposers."""

from .sprint import run_sprint
from .sprint_file import load_sprint

__all__ = ["load_sprint", "run_sprint"]
