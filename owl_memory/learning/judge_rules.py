"""Judge rules: compiled from the gold query of a run that succeeded, run to judge tasks that have no gold.

**Compiling** (`compile_rule`, for gold of kind sparql or ask). The task's constants are the IRIs and literals of
the gold query (read on its parsed form) that the task text mentions as people write them (learning/mentions.py:
an IRI with or without <>, a CURIE of the ontology's, the text's or a conventional prefix, a local name or label,
quoted or not; a name that names two terms names none, and the rule's `notes` say so), or, for a literal, quoted or
as a bare number. Each becomes a parameter ("p1", "p2", ... in the order the text mentions them; an IRI parameter
keeps the role of its term: class, property or individual, and an individual's classes). The template is the
gold text with each such constant (written as <IRI>, as a CURIE of the query's own PREFIXes, as a quoted literal,
or as a bare number) replaced by the parameter's placeholder IRI; the question is the task text with each mention
replaced by "{p1}". A rule is kept only when the template parses, names none of the lifted constants any more,
and, bound back to the original constants, returns exactly the gold's results over the task's ontology. No
parameter, no rule (it would not generalize).

**Binding a task** (`bindings_for`, learning/binding.py): a task applies when its text has the rule's question form
exactly, or up to case, punctuation, articles, a few interchangeable function words and the order of its clauses,
each slot naming one term of the parameter's role (or holding a literal); tasks over MAX_TASK_CHARS characters get
no rule. The Judgment says how the question matched and how each slot named its term.

**Running** (`RuleJudge`): rules are found by Memory.search (kind JudgeRule, the task type; deterministic order),
kept when they apply to the task's ontology (or to any), are not demoted (more disagreements with gold than
agreements) and bind; at most MAX_RULES run, each in the agent's query worker (the read-only guard, wall time,
memory and row limits), its parameters bound into the parsed query (never the text). A select rule's rows are
compared with the answer's terms as the sparql judge compares gold rows; an ask rule must hold over the run's
graph. The run succeeds when every rule that ran says so; the Judgment names the rules (`rules`). A rule whose
query the guard refuses or a limit stops does not decide (a gold run counts it as a disagreement).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from rdflib import Graph, Literal, URIRef
from rdflib.term import Identifier

from ..adapters import sparql as sparql_text
from ..adapters.sparql_binding import bind_terms
from ..agent import QueryLimits, QueryWorker
from ..errors import QueryRefused, ToolError
from ..model import ItemSpec, JudgeRule, Parameter
from ..model.judge_rules import placeholder
from ..model.judgments import Expect, Judgment
from ..vocab import serves_ontology
from .binding import bind
from .families import OntologyView, is_builtin
from .judging import judge_terms, run_graph, select_rows
from .mentions import Mention, Reader

if TYPE_CHECKING:
    from ..store import Memory

MAX_RULES = 3
SEARCH_K = 50
RULE_ERROR = "rule-error"
_PREFIX = re.compile(r"PREFIX\s+([\w.-]*):\s*<([^<>\s]*)>", re.IGNORECASE)
_CURIE = re.compile(r"([A-Za-z][\w.-]*|):([A-Za-z_][\w.-]*)")
_NUMBER = re.compile(r"-?\d+(\.\d+)?")


@dataclass(frozen=True)
class Applicable:
    """A stored rule that applies to a task: its item id, the rule, its parameters bound (placeholder -> term) and
    how the task's question matched the rule's."""

    item_id: str
    rule: JudgeRule
    bindings: dict
    explanation: str = ""


# ---- compiling ------------------------------------------------------------------------------------------------

def compile_rule(task: str, expect: Expect, graph: Graph,
                 view: OntologyView | Reader | None = None) -> JudgeRule | None:
    """The judge rule of a gold-judged task (None when the gold is of another kind or nothing generalizes)."""
    if expect.kind not in ("sparql", "ask") or not isinstance(expect.gold, str):
        return None
    try:
        gold = sparql_text.parse(expect.gold)
    except sparql_text.QuerySyntaxError:
        return None
    reader = view if isinstance(view, Reader) else Reader(graph)
    text = " ".join(task.split())
    found = [(t, *_mention(t, text, reader)) for t in sparql_text.named_terms(gold)]
    notes = tuple(sorted({note for _, m, note in found if m is None and note}))
    mentions = sorted((m.start, m.form, t) for t, m, _ in found if m is not None)
    params: list[Parameter] = []
    question, template = text, expect.gold
    originals: dict[URIRef, Identifier] = {}  # placeholder IRI -> the constant it stands for
    for _, form, term in mentions:
        name = f"p{len(params) + 1}"
        lifted = _lifted(template, term, placeholder(name))
        if lifted == template or form not in question:  # `a` for rdf:type, or inside another mention
            continue
        params.append(Parameter(name, _kind(term), reader.role(term) if isinstance(term, URIRef) else "",
                                tuple(sorted(reader.classes(term)))))
        question, template = question.replace(form, "{" + name + "}"), lifted
        originals[URIRef(placeholder(name))] = term
    if not params:
        return None
    rule = JudgeRule("select" if sparql_text.form(gold) == "SELECT" else "ask", template, tuple(params), question,
                     notes=notes)
    return rule if _faithful(rule, expect.gold, originals, graph) else None


def _mention(term: Identifier, text: str, reader: Reader) -> tuple[Mention | None, str]:
    """The first mention of a constant of the gold in the task text (None when there is none), and a note when a
    name of it names other terms too."""
    if isinstance(term, URIRef):
        return reader.find(term, text)
    if isinstance(term, Literal) and str(term).strip():
        forms = [f'"{term}"'] + ([str(term)] if _NUMBER.fullmatch(str(term)) else [])
        for form in forms:
            m = re.search(r"(?<![\w:])" + re.escape(form) + r"(?![\w:])", text)
            if m:
                return Mention(m.start(), m.end(), form, "literal"), ""
    return None, ""


def _kind(term) -> str:
    """A parameter's kind: "iri", or "literal" with the original's @language or ^^datatype."""
    if isinstance(term, URIRef):
        return "iri"
    return "literal" + (f"@{term.language}" if term.language else f"^^{term.datatype}" if term.datatype else "")


def _lifted(text: str, term, iri: str) -> str:
    """The gold text with every spelling of `term` (<IRI>, CURIE of its PREFIXes, quoted literal, bare number)
    replaced by <iri>."""
    if isinstance(term, Literal):
        quoted = "|".join(re.escape(q + str(term) + q) for q in ('"', "'"))
        text = re.sub(rf"(?:{quoted})(?:@[A-Za-z-]+|\^\^(?:<[^<>\s]*>|[\w.-]*:[\w-]+))?", f"<{iri}>", text)
        bare = rf"(?<![\w.\"':#/-]){re.escape(str(term))}(?![\w.\"'])"  # a number written as itself
        return re.sub(bare, f"<{iri}>", text) if _NUMBER.fullmatch(str(term)) else text
    forms = [f"<{term}>"] + [f"{p}:{str(term)[len(ns):]}" for p, ns in _PREFIX.findall(text)
                             if ns and str(term).startswith(ns) and _CURIE.fullmatch(f"{p}:{str(term)[len(ns):]}")]
    for form in forms:
        text = re.sub(r"(?<![\w:<])" + re.escape(form) + r"(?![\w:-]|\.\w)", f"<{iri}>", text)
    return text


def _faithful(rule: JudgeRule, gold: str, originals: dict, graph: Graph) -> bool:
    """Whether the template parses, names no lifted constant, and bound back gives the gold's own results."""
    try:
        template = sparql_text.parse(rule.template)
    except sparql_text.QuerySyntaxError:
        return False
    if sparql_text.named_terms(template) & set(originals.values()):  # a spelling was left unlifted
        return False
    return _results(graph, bind_terms(template, originals)) == _results(graph, sparql_text.parse(gold))


def _results(graph: Graph, query):
    """A query's answer over a graph as a comparable value (ASK's truth, else the set of rows)."""
    result = sparql_text.evaluate(graph, query)
    return bool(result.ask) if result.kind == "ASK" else set(select_rows(result))


def rule_spec(rule: JudgeRule, *, task_type: str, ontology_iri: str | None, graph: Graph, run_id: str,
              trace_ref: str | None) -> ItemSpec:
    """The om:JudgeRule item of a compiled rule: applies to the task type, and to the ontology when its template
    names a term the ontology declares; content = the rule and its applicability (so equal rules share an id)."""
    declared = {str(s) for s in graph.subjects() if isinstance(s, URIRef) and not is_builtin(s)}
    specific = bool({str(t) for t in sparql_text.named_terms(sparql_text.parse(rule.template))} & declared)
    applies = (ontology_iri,) if specific and ontology_iri else ()
    content = json.dumps({"rule": rule.to_json(), "applies_to": list(applies), "task_type": task_type},
                         sort_keys=True)
    return ItemSpec("JudgeRule", f"Judge {task_type} answers by a learned {rule.check} check",
                    f"Use to judge {task_type} answers without gold: {rule.outcome} of the rule's query.", content,
                    applies_to=applies, task_types=(task_type,), tags=("learned", "judge-rule"), confidence=0.7,
                    provenance={"run": run_id, **({"derived_from": trace_ref} if trace_ref else {})},
                    action_schema=rule, verification_hook=f"judge rule: {rule.outcome}")


# ---- binding a task -------------------------------------------------------------------------------------------

def bindings_for(rule: JudgeRule, task: str, view: OntologyView | Reader) -> dict | None:
    """Placeholder IRI -> term for each parameter, read from a task whose question has the rule's form
    (learning/binding.py); None when the form differs or a slot names no single term of its role."""
    bound = bind(rule, task, view if isinstance(view, Reader) else Reader(view.graph))
    return None if bound is None else bound.bindings


# ---- running --------------------------------------------------------------------------------------------------

class RuleJudge:
    """Finds and runs the judge rules of a memory; holds one query worker per graph (close() stops them)."""

    def __init__(self, memory: Memory, limits: QueryLimits | None = None):
        self.memory, self.limits = memory, limits or QueryLimits()
        self._workers: dict[int, tuple[Graph, QueryWorker]] = {}
        self._readers: dict[int, tuple[Graph, Reader]] = {}

    def applicable(self, task: str, graph: Graph, task_type: str | None, ontology_iri: str | None) -> list[Applicable]:
        """The stored rules that apply to the task and bind, in search order, at most MAX_RULES."""
        wanted = task_type if task_type and task_type != "general" else None
        hits = self.memory.search(task_type=wanted, kinds=("JudgeRule",), k=SEARCH_K)
        out = []
        for hit in hits:
            item = self.memory.get(hit.id)
            if not isinstance(item.action_schema, JudgeRule) or item.demoted or \
                    not serves_ontology(item.applies_to, ontology_iri):
                continue
            bound = bind(item.action_schema, task, self.reader(graph))
            if bound is not None:
                out.append(Applicable(item.id, item.action_schema, bound.bindings, bound.explanation))
        return out[:MAX_RULES]

    def reader(self, graph: Graph) -> Reader:
        """The mentions reader of a graph, built once per graph."""
        if id(graph) not in self._readers:
            self._readers[id(graph)] = (graph, Reader(graph))
        return self._readers[id(graph)][1]

    def verdict(self, rule: Applicable, answer, graph: Graph, task: str) -> Judgment:
        """One rule's verdict on an answer (a failed judgment naming the limit when its query could not run)."""
        try:
            if rule.rule.check == "ask":
                worker = QueryWorker(run_graph(graph, str(answer)), self.limits)  # this answer's own graph
                try:
                    ok = bool(worker.query(rule.rule.template, rule.bindings).ask)
                finally:
                    worker.close()
                return Judgment(ok, f"the rule's ASK answers {str(ok).lower()} over the run's graph", "high", "rule",
                                () if ok else ("ASK pattern",), "" if ok else "ask-check-failed", (rule.item_id,))
            rows = self._worker(graph).query(rule.rule.template, rule.bindings)
        except (QueryRefused, ToolError) as e:
            return Judgment(False, f"the rule's query did not run ({str(e)[:160]})", "low", "rule", (),
                            RULE_ERROR, (rule.item_id,))
        terms = {_rdf(v) for row in rows.rows for v in row if v is not None and v[0] != "bnode"}
        return replace(judge_terms(answer, terms, graph, task), judge="rule", rules=(rule.item_id,))

    def judge(self, task: str, answer, graph: Graph, task_type: str | None,
              ontology_iri: str | None) -> Judgment | None:
        """The verdict of every applicable rule combined (success when all say so), or None when none applies. A rule
        whose query the guard refuses or a limit stops does not decide (gold runs count it as a disagreement)."""
        ran = [(r, self.verdict(r, answer, graph, task)) for r in self.applicable(task, graph, task_type,
                                                                                  ontology_iri)]
        ran = [(r, v) for r, v in ran if v.failure_mode != RULE_ERROR]
        if not ran:
            return None
        rules, verdicts = [r for r, _ in ran], [v for _, v in ran]
        ok = all(v.success for v in verdicts)
        reason = "; ".join(f"judge rule {r.item_id}: {v.reason} (the question {r.explanation})"
                           for r, v in zip(rules, verdicts, strict=True))
        failed = next((v for v in verdicts if not v.success), verdicts[0])
        return Judgment(ok, reason[:600], failed.confidence, "rule", () if ok else failed.missing,
                        "" if ok else failed.failure_mode, tuple(r.item_id for r in rules))

    def record_agreement(self, task: str, answer, graph: Graph, task_type: str | None, ontology_iri: str | None,
                         gold: Judgment) -> list[str]:
        """Run the applicable rules beside a gold judgment and count, per rule, one use that agreed (success) or
        disagreed (failure) with gold; the ids of the rules that ran."""
        ran = []
        for rule in self.applicable(task, graph, task_type, ontology_iri):
            self.memory.record_use(rule.item_id, self.verdict(rule, answer, graph, task).success == gold.success)
            ran.append(rule.item_id)
        return ran

    def _worker(self, graph: Graph) -> QueryWorker:
        """The query worker over `graph`, started once."""
        if id(graph) not in self._workers:
            self._workers[id(graph)] = (graph, QueryWorker(graph, self.limits))
        return self._workers[id(graph)][1]

    def close(self) -> None:
        """Stop every query worker."""
        for _, worker in self._workers.values():
            worker.close()
        self._workers.clear()


def _rdf(value: tuple):
    """A worker row value ("uri" | "literal", text) as an RDF term."""
    return URIRef(value[1]) if value[0] == "uri" else Literal(value[1])
