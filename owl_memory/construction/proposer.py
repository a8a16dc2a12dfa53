"""Proposers: turn a failing competency question into triples to add (symbolic, or an LLM through DSPy)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import islice

from rdflib import BNode, Graph, Literal, URIRef, Variable
from rdflib.collection import Collection
from rdflib.namespace import OWL, RDF, RDFS, SH, XSD
from rdflib.paths import InvPath, SequencePath

from ..adapters import sparql as sparql_text
from ..model import ChangeSet
from ..repair.synth import default_literal, generate, generate_iri
from ..repair.verify import Violation
from ..vocab import local_name
from .cq import CompetencyQuestion, bound_values, evaluate, term
from .workspace import copy_graph, nt_lines

MAX_CANDIDATES = 8


@dataclass
class Proposal:
    """Triples proposed to make one competency question pass.

    Args:
        cq_id: the competency question it answers.
        added: triples to add (rdflib terms).
        passes: whether the CQ passes once they are added (checked on a copy of the graph).
        source: "symbolic", "llm" or "compiled".
        note: a short reason when nothing could be proposed.
    """

    cq_id: str
    added: list = field(default_factory=list)
    passes: bool = False
    source: str = "symbolic"
    note: str = ""

    def to_dict(self) -> dict:
        """JSON-compatible form: N-Triples lines, never more than the proposal itself."""
        return {"cq": self.cq_id, "added": nt_lines(self.added), "passes": self.passes, "source": self.source,
                "note": self.note}


# ---------------------------------------------------------------- what shapes and vocabulary say about a property

def property_constraints(shapes: Graph, vocabulary: Graph, predicate) -> dict:
    """What the shapes (any property shape with this path) and vocabulary say a value of `predicate` must be."""
    c = {"in": [], "hasValue": [], "pattern": [], "datatype": None, "iri": False, "literal": False, "minLength": 0}
    for ps in sorted(shapes.subjects(SH.path, predicate), key=str):
        _shape_constraints(shapes, ps, c)
    kinds = set(vocabulary.objects(predicate, RDF.type))
    rng = vocabulary.value(predicate, RDFS.range)
    c["iri"] = c["iri"] or OWL.ObjectProperty in kinds
    c["literal"] = c["literal"] or OWL.DatatypeProperty in kinds or (rng is not None and str(rng).startswith(str(XSD)))
    if c["datatype"] is None and rng is not None and str(rng).startswith(str(XSD)):
        c["datatype"] = rng
    return c


def _shape_constraints(shapes: Graph, ps, c: dict) -> None:
    """Fold one property shape's constraints into `c`."""
    for lst in shapes.objects(ps, SH["in"]):
        c["in"].extend(Collection(shapes, lst))
    c["hasValue"].extend(shapes.objects(ps, SH.hasValue))
    c["pattern"].extend((str(p), str(shapes.value(ps, SH.flags) or "")) for p in shapes.objects(ps, SH.pattern))
    dt = shapes.value(ps, SH.datatype)
    c["datatype"] = c["datatype"] or dt
    kind = shapes.value(ps, SH.nodeKind)
    c["iri"] = c["iri"] or kind in (SH.IRI, SH.BlankNodeOrIRI) or (ps, SH["class"], None) in shapes
    c["literal"] = c["literal"] or dt is not None or kind == SH.Literal
    ml = shapes.value(ps, SH.minLength)
    c["minLength"] = max(c["minLength"], int(ml)) if ml is not None else c["minLength"]


# ---------------------------------------------------------------- the query's basic graph pattern and filters

def query_pattern(cq: CompetencyQuestion) -> tuple[list, list]:
    """The required triple patterns and the filter expressions of a CQ (OPTIONAL / MINUS parts left out)."""
    return sparql_text.patterns(cq.prepared(), required_only=True)


def _expand_paths(triples: list) -> list:
    """Rewrite sequence and inverse property paths into plain triples with fresh variables."""
    out = []
    for i, (s, p, o) in enumerate(triples):
        if isinstance(p, InvPath):
            out.extend(_expand_paths([(o, p.arg, s)]))
        elif isinstance(p, SequencePath):
            nodes = [s] + [Variable(f"_path{i}_{k}") for k in range(len(p.args) - 1)] + [o]
            out.extend(_expand_paths([(nodes[k], a, nodes[k + 1]) for k, a in enumerate(p.args)]))
        else:
            out.append((s, p, o))
    return out


def _filter_hints(filters: list) -> dict:
    """Literal candidates that filters suggest per variable (REGEX examples, STRSTARTS prefixes, = constants)."""
    hints: dict = {}
    for hint in (h for expr in filters for h in sparql_text.filter_hints(expr)):
        text = generate(hint.value, hint.flags) if hint.kind == "regex" else hint.value
        for v in hint.variables:
            hints.setdefault(v, []).append(text)
    return hints


# ---------------------------------------------------------------- the symbolic proposer

class SymbolicProposer:
    """Proposes what a failing ASK (or SELECT with expected rows) pattern requires, with no language model.

    Variables become existing values, values the shapes allow (sh:in, sh:hasValue, sh:pattern examples,
    sh:datatype defaults) or fresh IRIs minted under `namespace`; the choice is checked by running the CQ.

    Args:
        namespace: IRI prefix for fresh nodes.
    """

    source = "symbolic"

    def __init__(self, namespace: str = "http://w3id.org/owl-memory/sprint/data/"):
        self.namespace = namespace
        self.calls = 0

    def propose(self, cq: CompetencyQuestion, graph: Graph, shapes: Graph) -> Proposal:
        """Triples that make `cq` pass on `graph` (checked on a copy); an empty Proposal with a note if none."""
        self.calls += 1
        if evaluate(cq, graph).passed:
            return Proposal(cq.id, [], True, self.source, "already passes")
        triples, filters = query_pattern(cq)
        fixed = {**bound_values(cq), **self._row_bindings(cq)}
        triples = [tuple(fixed.get(t, t) for t in tr) for tr in _expand_paths(triples)]
        if any(isinstance(p, Variable) or not isinstance(p, URIRef) for _, p, _ in triples):
            return Proposal(cq.id, [], False, self.source, "a predicate is a variable or complex path")
        if not triples:
            return Proposal(cq.id, [], False, self.source, "the query has no triple pattern to satisfy")
        return self._search(cq, graph, shapes, triples, _filter_hints(filters))

    def propose_for_violations(self, violations: list, graph: Graph, shapes: Graph) -> list:
        """Triples for the sh:minCount violations repair leaves (no value it can derive): values the shapes and
        vocabulary allow, else fresh IRIs; only on plain predicate paths."""
        self.calls += 1
        added: set = set()
        for v in violations:
            if v.component == SH.MinCountConstraintComponent and isinstance(v.path, URIRef):
                added |= self._missing_values(v, graph, shapes)
        return sorted(added, key=lambda t: nt_lines([t]))

    def _missing_values(self, v: Violation, graph: Graph, shapes: Graph) -> set:
        """The values a focus node lacks to reach the shape's sh:minCount on its path."""
        focus, path = v.focus, v.path
        have = set(graph.objects(focus, path))
        need = int(shapes.value(v.shape, SH.minCount) or 1) - len(have)
        c = property_constraints(shapes, graph, path)
        cq = CompetencyQuestion("violation", "", "ASK {}")
        pool = [x for x in self._values(cq, graph, shapes, focus, path, Variable(local_name(path)), [])
                if x not in have and not str(x).startswith(self.namespace)]
        if c["literal"] and not c["iri"]:
            text = self._default_text(focus, path, c)
            pool += [self._literal(f"{text} {i}", c) for i in range(2, need + 2)]
        else:
            named = set(c["in"]) | set(c["hasValue"])
            pool = [x for x in pool if not isinstance(x, Literal) or x in named]
            pool += [URIRef(f"{self.namespace}{local_name(focus)}-{local_name(path)}-{i}") for i in range(1, need + 1)]
        return {(focus, path, x) for x in pool[:max(0, need)]}

    def _row_bindings(self, cq: CompetencyQuestion) -> dict:
        """For a SELECT expecting rows, the first expected row as fixed variable values."""
        if cq.kind != "SELECT" or not isinstance(cq.expected, list) or not cq.expected:
            return {}
        return {Variable(str(k).lstrip("?")): term(v, cq.prefixes) for k, v in cq.expected[0].items()}

    def _search(self, cq, graph, shapes, triples, hints) -> Proposal:
        """Try the first candidate of every variable, then vary one variable at a time."""
        order = _variable_order(triples)
        cands = self._candidates(cq, graph, shapes, triples, hints, order)
        choice = {v: cands[v][0] for v in order}
        trial = copy_graph(graph)
        added = self._try(cq, trial, triples, choice)
        if added is not None:
            return Proposal(cq.id, added, True, self.source)
        for v in order:
            for alt in cands[v][1:]:
                added = self._try(cq, trial, triples, {**choice, v: alt})
                if added is not None:
                    return Proposal(cq.id, added, True, self.source)
        return Proposal(cq.id, [], False, self.source, "no combination of candidate values made the CQ pass")

    def _try(self, cq, trial: Graph, triples, choice) -> list | None:
        """The new triples of an assignment if the CQ passes with them added to `trial` (trial is restored)."""
        ground = [tuple(choice.get(t, t) for t in tr) for tr in triples]
        new = sorted({t for t in ground if t not in trial}, key=lambda t: nt_lines([t]))
        for t in new:
            trial.add(t)
        ok = evaluate(cq, trial).passed
        for t in new:
            trial.remove(t)
        return new if ok else None

    def _candidates(self, cq, graph, shapes, triples, hints, order) -> dict:
        """Candidate terms for every variable, best first."""
        cands: dict = {}
        for v in order:
            uses = [(s, p) for s, p, o in triples if o == v]
            if not uses:
                cands[v] = [self._fresh(cq, None, v)]
                continue
            s, p = uses[0]
            s = cands.get(s, [self._fresh(cq, None, s)])[0] if isinstance(s, Variable) else s
            cands[v] = self._values(cq, graph, shapes, s, p, v, hints.get(v, []))
        return cands

    def _values(self, cq, graph, shapes, subject, predicate, var, hints) -> list:
        """Candidate values for `var` as object of (subject, predicate), best first, deduplicated."""
        c = property_constraints(shapes, graph, predicate)
        iri = c["iri"] and not c["literal"]
        found = list(islice(graph.objects(subject, predicate), MAX_CANDIDATES))
        found += c["hasValue"] + c["in"]
        for pat, flags in c["pattern"]:
            text = generate_iri(pat, flags, local_name(self._fresh(cq, subject, var))) if iri else generate(pat, flags)
            found += [] if text is None else [URIRef(text) if iri else self._literal(text, c)]
        found += [h if isinstance(h, Literal | URIRef) else self._literal(str(h), c) for h in hints]
        found += [self._fresh(cq, subject, var)] if iri or not c["literal"] else []
        found += [self._literal(self._default_text(subject, predicate, c), c)]
        good = [x for x in found if _allowed(x, c)] or found
        return list(dict.fromkeys(good))[:MAX_CANDIDATES]

    def _literal(self, text: str, c: dict) -> Literal:
        """A literal of the constrained datatype (plain for xsd:string)."""
        dt = c["datatype"]
        return Literal(text) if dt in (None, XSD.string) else Literal(text, datatype=dt)

    def _default_text(self, subject, predicate, c: dict) -> str:
        """A readable default value: a datatype default, or `<property> of <subject>` padded to minLength."""
        default = "" if c["datatype"] in (None, XSD.string) else str(default_literal(c["datatype"]))
        if default:
            return default
        text = f"{local_name(predicate)} of {local_name(subject)}"
        return text + "." * max(0, c["minLength"] - len(text))

    def _fresh(self, cq, subject, var) -> URIRef:
        """A deterministic fresh IRI: namespace + subject name (or CQ id) + variable name."""
        anchor = local_name(subject) if isinstance(subject, URIRef) else cq.id
        return URIRef(f"{self.namespace}{anchor}-{var}")


def _allowed(value, c: dict) -> bool:
    """Whether a candidate meets the sh:in / sh:pattern / minLength constraints collected for its property."""
    if c["in"] and value not in c["in"]:
        return False
    if c["hasValue"] and value not in c["hasValue"]:
        return False
    if isinstance(value, BNode):
        return False
    text = str(value)
    if any(not re.search(p, text, re.I if "i" in f else 0) for p, f in c["pattern"]):
        return False
    return isinstance(value, URIRef) or len(text) >= c["minLength"]


def _variable_order(triples) -> list:
    """Variables in the order they must be chosen: subjects before the objects that hang off them."""
    order: list = []
    for s, _, o in triples:
        for t in (s, o):
            if isinstance(t, Variable) and t not in order:
                order.append(t)
    subjects = {s for s, _, _ in triples}
    return sorted(order, key=lambda v: (v not in subjects, order.index(v)))



# ---------------------------------------------------------------- the LLM proposer (strict RLM over capped tools)

LLM_INSTRUCTIONS = """Make the competency question pass by proposing RDF triples to ADD to the ontology.
`competency_question` holds its id, question, SPARQL query and prefixes; `ontology` holds only sizes, never
the graph itself: explore it with the ontology_* tools (ontology_query returns a results handle; read rows with
results_peek) and search procedural memory with memory_search / memory_get. Every read is capped. SUBMIT(turtle)
with Turtle text of only the new triples (the question's prefixes are declared for you); mint new nodes under
`ontology["namespace"]`."""


class LLMProposer:
    """Proposes triples for a failing CQ with a language model: a dspy.RLM over the capped owl-memory tools.

    The proposal is parsed as Turtle and kept only when the CQ passes on a copy of the graph with it added.

    Args:
        lm: a dspy.LM (or any DSPy-compatible LM, e.g. dspy.utils.DummyLM in tests).
        namespace: IRI prefix the model is told to mint new nodes under.
        max_iters: RLM iterations per proposal.
        max_llm_calls: LM calls per proposal.
    """

    source = "llm"

    def __init__(self, lm, namespace: str = "http://w3id.org/owl-memory/sprint/data/", max_iters: int = 8,
                 max_llm_calls: int = 12):
        self.lm, self.namespace = lm, namespace
        self.max_iters, self.max_llm_calls = max_iters, max_llm_calls
        self.calls = 0

    def propose(self, cq: CompetencyQuestion, graph: Graph, shapes: Graph, memory=None) -> Proposal:
        """Ask the model for Turtle answering `cq`; a Proposal that passes, or an empty one with a note."""
        try:
            text = self._ask(cq, graph, memory)
        except Exception as e:  # an LM or interpreter failure is recoverable: the symbolic proposer takes over
            return Proposal(cq.id, [], False, self.source, f"LLM proposer failed: {type(e).__name__}")
        added = self._parse(cq, text, graph)
        if added is None:
            return Proposal(cq.id, [], False, self.source, "the model's answer is not valid Turtle")
        trial = copy_graph(graph)
        for t in added:
            trial.add(t)
        ok = bool(added) and evaluate(cq, trial).passed
        return Proposal(cq.id, added if ok else [], ok, self.source, "" if ok else "the model's triples fail the CQ")

    def _ask(self, cq: CompetencyQuestion, graph: Graph, memory) -> str:
        """Run the RLM once and return its Turtle answer; counts the LM calls it made."""
        question = {"id": cq.id, "question": cq.question, "query": cq.query, "prefixes": cq.prefixes}
        pred = self._rlm("competency_question: dict, ontology: dict -> turtle: str", LLM_INSTRUCTIONS, graph, memory,
                         competency_question=question, ontology={"triples": len(graph), "namespace": self.namespace})
        return str(pred.turtle)

    def _rlm(self, signature: str, instructions: str, graph: Graph, memory, **inputs):
        """One dspy.RLM run over the capped tools (the graph as the ontology); adds its LM calls to self.calls."""
        import dspy

        from ..agent.runner import RLM, interpreter_factory
        from ..agent.tools import tools

        sig = dspy.Signature(signature, instructions)
        rlm = RLM(sig, max_iters=self.max_iters, max_llm_calls=self.max_llm_calls,
                  tools=tools(memory, ontology=graph), interpreter_factory=interpreter_factory())
        before = {id(e) for e in getattr(self.lm, "history", None) or []}
        try:
            with dspy.context(lm=self.lm, disable_history=False):
                return rlm(**inputs)
        finally:
            self.calls += len([e for e in getattr(self.lm, "history", None) or [] if id(e) not in before])

    def _parse(self, cq: CompetencyQuestion, text: str, graph: Graph) -> list | None:
        """The new, blank-node-free triples of the model's Turtle (the CQ's prefixes declared), or None."""
        g = parse_turtle(text, cq.prefixes)
        if g is None:
            return None
        return sorted((t for t in g if t not in graph and not any(isinstance(x, BNode) for x in t)),
                      key=lambda t: nt_lines([t]))


def parse_turtle(text: str, prefixes: dict) -> Graph | None:
    """A model's Turtle answer (code fences stripped, `prefixes` declared) as a graph; None when it does not parse."""
    head = "".join(f"@prefix {p}: <{ns}> .\n" for p, ns in prefixes.items())
    body = re.sub(r"^```\w*\s*|```\s*$", "", str(text).strip())
    try:
        return Graph().parse(data=head + body, format="turtle")
    except Exception:  # rdflib raises many parser-specific types
        return None


# ---------------------------------------------------------------- the LLM repair proposer (fallback of the repair loop)

REPAIR_INSTRUCTIONS = """Repair the SHACL violations that no library operator could fix, by proposing a change set.
`violations` lists each one (focus node, constraint component, path, value, message and the violated shape's
parameters); `data` holds only sizes and prefixes, never the graph itself: explore it with the ontology_* tools
(ontology_query returns a results handle; read rows with results_peek). Every read is capped.
SUBMIT(added, removed): Turtle text of the triples to add, and of existing triples to remove ("" for none); the
prefixes in `data["prefixes"]` are declared for you. Change as little as possible; never remove a node's rdf:type."""
MAX_VIOLATIONS = 5  # violations shown to the model per call


class LLMRepairProposer(LLMProposer):
    """Proposes a change set for violations the repair operators cannot fix: a dspy.RLM over the capped tools.

    Its answer is parsed (Turtle), stripped of blank nodes, of additions already present and of removals absent;
    the repair loop then puts it through the same minimal-change rules and verification as any operator's patch.

    Args:
        lm: a dspy.LM (or dspy.utils.DummyLM in tests).
        max_iters: RLM iterations per proposal.
        max_llm_calls: LM calls per proposal.
    """

    def __init__(self, lm, max_iters: int = 8, max_llm_calls: int = 12):
        super().__init__(lm, max_iters=max_iters, max_llm_calls=max_llm_calls)

    def propose_repair(self, violations: list, graph: Graph, shapes: Graph, memory=None) -> ChangeSet:
        """Ask the model for a change set fixing `violations` on `graph`; an empty ChangeSet with a note on failure."""
        prefixes = {p: str(ns) for g in (shapes, graph) for p, ns in g.namespaces() if p}
        summary = [violation_summary(v, shapes) for v in violations[:MAX_VIOLATIONS]]
        try:
            pred = self._rlm("violations: list, data: dict -> added: str, removed: str", REPAIR_INSTRUCTIONS, graph,
                             memory, violations=summary, data={"triples": len(graph), "prefixes": prefixes})
        except Exception as e:  # an LM or interpreter failure is recoverable: the violation stays, with its reason
            return ChangeSet(note=f"LLM proposer failed: {type(e).__name__}")
        add, drop = parse_turtle(pred.added or "", prefixes), parse_turtle(pred.removed or "", prefixes)
        if add is None or drop is None:
            return ChangeSet(note="the model's answer is not valid Turtle")
        ok = lambda t: not any(isinstance(x, BNode) for x in t)  # noqa: E731
        added = tuple(sorted((t for t in add if t not in graph and ok(t)), key=lambda t: nt_lines([t])))
        removed = tuple(sorted((t for t in drop if t in graph and ok(t)), key=lambda t: nt_lines([t])))
        return ChangeSet(added, removed, "" if added or removed else "the model proposed no change")


def violation_summary(v: Violation, shapes: Graph) -> dict:
    """What the model is told about one violation: its terms as N3 and the violated shape's own parameters."""
    params = {str(p).removeprefix(str(SH)): o.n3() for p, o in shapes.predicate_objects(v.shape)
              if str(p).startswith(str(SH)) and not isinstance(o, BNode)} if v.shape is not None else {}
    return {"focus": v.focus.n3(), "component": str(v.component).removeprefix(str(SH)), "path": v.path_text,
            "value": v.value.n3() if v.value is not None else None, "message": v.message[:200], "shape": params}
