"""Ontology construction: sprints over a graph workspace, competency questions, symbolic and LLM proposers."""

from .sprint import load_sprint, run_sprint

__all__ = ["load_sprint", "run_sprint"]
