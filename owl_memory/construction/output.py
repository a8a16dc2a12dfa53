"""The built ontology as a file: a sprint's working graph written with the prefixes its input declared."""

from __future__ import annotations

from ..rdfio import check_output, guess_format, write_graph
from .sprint_file import Sprint
from .workspace import Workspace, copy_graph


def check_out(out) -> None:
    """OutputError, before any work is done, when `out` (a file path, or None for no file) cannot be written."""
    if out is not None:
        check_output(out, guess_format(out))


def write_out(ws: Workspace, sprint: Sprint, out) -> str | None:
    """Write the working graph to `out` (format from its suffix, Turtle by default) with the seed's prefixes and
    the competency questions' ones; the path written, or None when `out` is None."""
    if out is None:
        return None
    graph = copy_graph(ws.working)
    for cq in sprint.cqs:
        for prefix, namespace in cq.prefixes.items():
            graph.bind(prefix, namespace, override=False)
    write_graph(graph, out, guess_format(out))
    return str(out)
