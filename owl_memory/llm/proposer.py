"""The LLM proposer: a language model proposes triples that make a failing competency question pass."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rdflib import Graph

from ..construction import CompetencyQuestion, Proposal, copy_graph, evaluate
from .tool_runs import ToolRun, ToolRunProposer
from .turtle import named_triples, parse_turtle

if TYPE_CHECKING:
    from ..store import Memory

INSTRUCTIONS = """Make the competency question pass by proposing RDF triples to ADD to the ontology.
`competency_question` holds its id, question, SPARQL query and prefixes; `ontology` holds only sizes, never
the graph itself: explore it with the ontology_* tools (ontology_query returns a results handle; read rows with
results_peek) and search procedural memory with memory_search / memory_get. Every read is capped. SUBMIT(turtle)
with Turtle text of only the new triples (the question's prefixes are declared for you); mint new nodes under
`ontology["namespace"]`."""


class LLMProposer(ToolRunProposer):
    """Proposes triples for a failing CQ with a language model: a dspy.RLM over the capped owl-memory tools.

    The proposal is parsed as Turtle and kept only when the CQ passes on a copy of the graph with it added.

    Args:
        lm: a dspy.LM (or any DSPy-compatible LM, e.g. dspy.utils.DummyLM in tests).
        namespace: IRI prefix the model is told to mint new nodes under.
        max_iters: RLM iterations per proposal.
        max_llm_calls: LM calls per proposal.
    """

    def __init__(self, lm, namespace: str = "http://w3id.org/owl-memory/sprint/data/", max_iters: int = 8,
                 max_llm_calls: int = 12):
        """Hold the LM, the namespace and the budgets of each RLM run."""
        self.namespace = namespace
        self.run = ToolRun(lm, max_iters, max_llm_calls)

    def propose(self, cq: CompetencyQuestion, graph: Graph, shapes: Graph, memory: Memory | None = None) -> Proposal:
        """Ask the model for Turtle answering `cq`; a Proposal that passes, or an empty one with a note."""
        try:
            text = self._ask(cq, graph, memory)
        except Exception as e:  # an LM or interpreter failure is recoverable: the symbolic proposer takes over
            return Proposal(cq.id, [], False, self.source, f"LLM proposer failed: {type(e).__name__}")
        answer = parse_turtle(text, cq.prefixes)
        if answer is None:
            return Proposal(cq.id, [], False, self.source, "the model's answer is not valid Turtle")
        added = list(named_triples(answer, lambda t: t not in graph))
        trial = copy_graph(graph)
        for t in added:
            trial.add(t)
        ok = bool(added) and evaluate(cq, trial).passed
        return Proposal(cq.id, added if ok else [], ok, self.source, "" if ok else "the model's triples fail the CQ")

    def _ask(self, cq: CompetencyQuestion, graph: Graph, memory: Memory | None) -> str:
        """Run the RLM once and return its Turtle answer."""
        question = {"id": cq.id, "question": cq.question, "query": cq.query, "prefixes": cq.prefixes}
        pred = self.run("competency_question: dict, ontology: dict -> turtle: str", INSTRUCTIONS, graph, memory,
                        competency_question=question, ontology={"triples": len(graph), "namespace": self.namespace})
        return str(pred.turtle)
