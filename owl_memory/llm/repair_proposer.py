"""The LLM repair proposer: the repair loop's fallback for violations no library operator can fix."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rdflib import BNode, Graph
from rdflib.namespace import SH

from ..model import ChangeSet, Violation
from .tool_runs import ToolRun, ToolRunProposer
from .turtle import named_triples, parse_turtle

if TYPE_CHECKING:
    from ..store import Memory

INSTRUCTIONS = """Repair the SHACL violations that no library operator could fix, by proposing a change set.
`violations` lists each one (focus node, constraint component, path, value, message and the violated shape's
parameters); `data` holds only sizes and prefixes, never the graph itself: explore it with the ontology_* tools
(ontology_query returns a results handle; read rows with results_peek). Every read is capped.
SUBMIT(added, removed): Turtle text of the triples to add, and of existing triples to remove ("" for none); the
prefixes in `data["prefixes"]` are declared for you. Change as little as possible; never remove a node's rdf:type."""
MAX_VIOLATIONS = 5  # violations shown to the model per call
MESSAGE_CHARS = 200


class LLMRepairProposer(ToolRunProposer):
    """Proposes a change set for violations the repair operators cannot fix: a dspy.RLM over the capped tools.

    Its answer is parsed (Turtle), stripped of blank nodes, of additions already present and of removals absent;
    the repair loop then puts it through the same minimal-change rules and verification as any operator's patch.

    Args:
        lm: a dspy.LM (or dspy.utils.DummyLM in tests).
        max_iters: RLM iterations per proposal.
        max_llm_calls: LM calls per proposal.
    """

    def __init__(self, lm, max_iters: int = 8, max_llm_calls: int = 12):
        """Hold the LM and the budgets of each RLM run."""
        self.run = ToolRun(lm, max_iters, max_llm_calls)

    def propose_repair(self, violations: list, graph: Graph, shapes: Graph,
                       memory: Memory | None = None) -> ChangeSet:
        """Ask the model for a change set fixing `violations` on `graph`; an empty ChangeSet with a note on failure."""
        prefixes = {p: str(ns) for g in (shapes, graph) for p, ns in g.namespaces() if p}
        summary = [violation_summary(v, shapes) for v in violations[:MAX_VIOLATIONS]]
        try:
            pred = self.run("violations: list, data: dict -> added: str, removed: str", INSTRUCTIONS, graph, memory,
                            violations=summary, data={"triples": len(graph), "prefixes": prefixes})
        except Exception as e:  # an LM or interpreter failure is recoverable: the violation stays, with its reason
            return ChangeSet(note=f"LLM proposer failed: {type(e).__name__}")
        add, drop = parse_turtle(pred.added or "", prefixes), parse_turtle(pred.removed or "", prefixes)
        if add is None or drop is None:
            return ChangeSet(note="the model's answer is not valid Turtle")
        added = named_triples(add, lambda t: t not in graph)
        removed = named_triples(drop, lambda t: t in graph)
        return ChangeSet(added, removed, "" if added or removed else "the model proposed no change")


def violation_summary(v: Violation, shapes: Graph) -> dict:
    """What the model is told about one violation: its terms as N3 and the violated shape's own parameters."""
    params = {str(p).removeprefix(str(SH)): o.n3() for p, o in shapes.predicate_objects(v.shape)
              if str(p).startswith(str(SH)) and not isinstance(o, BNode)} if v.shape is not None else {}
    return {"focus": v.focus.n3(), "component": str(v.component).removeprefix(str(SH)), "path": v.path_text,
            "value": v.value.n3() if v.value is not None else None, "message": v.message[:MESSAGE_CHARS],
            "shape": params}
