"""The symbolic proposer: the triples a failing competency question's pattern needs, chosen without a language model
(the LLM proposers are in owl_memory.llm)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import islice

from rdflib import BNode, Graph, Literal, URIRef, Variable
from rdflib.collection import Collection
from rdflib.namespace import OWL, RDF, RDFS, SH, XSD
from rdflib.paths import InvPath, SequencePath

from ..adapters import sparql as sparql_text
from ..model import Violation
from ..repair import default_literal, generate, generate_iri
from ..vocab import local_name
from .cq import CompetencyQuestion, bound_values, evaluate, term
from .workspace import copy_graph, nt_line, nt_lines

MAX_CANDIDATES = 8


@dataclass(frozen=True)
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

@dataclass(frozen=True)
class PropertyConstraints:
    """What the shapes (every property shape with this path) and the vocabulary say a value of a property must be.

    Args:
        in_values: the sh:in values (empty: any value).
        has_values: the sh:hasValue values.
        patterns: (regex, flags) of every sh:pattern.
        datatype: the first sh:datatype, else an XSD rdfs:range, else None.
        iri: values are IRIs (sh:nodeKind sh:IRI, sh:class, an owl:ObjectProperty).
        literal: values are literals (sh:datatype, sh:nodeKind sh:Literal, an owl:DatatypeProperty, an XSD range).
        min_length: the largest sh:minLength (0 when none).
    """

    in_values: tuple = ()
    has_values: tuple = ()
    patterns: tuple[tuple[str, str], ...] = ()
    datatype: URIRef | None = None
    iri: bool = False
    literal: bool = False
    min_length: int = 0


def property_constraints(shapes: Graph, vocabulary: Graph, predicate) -> PropertyConstraints:
    """What the shapes (any property shape with this path) and vocabulary say a value of `predicate` must be."""
    found = [_shape_constraints(shapes, ps) for ps in sorted(shapes.subjects(SH.path, predicate), key=str)]
    kinds = set(vocabulary.objects(predicate, RDF.type))
    rng = vocabulary.value(predicate, RDFS.range)
    xsd = rng if rng is not None and str(rng).startswith(str(XSD)) else None
    return PropertyConstraints(
        tuple(x for c in found for x in c.in_values), tuple(x for c in found for x in c.has_values),
        tuple(p for c in found for p in c.patterns), next((c.datatype for c in found if c.datatype), xsd),
        any(c.iri for c in found) or OWL.ObjectProperty in kinds,
        any(c.literal for c in found) or OWL.DatatypeProperty in kinds or xsd is not None,
        max((c.min_length for c in found), default=0))


def _shape_constraints(shapes: Graph, ps) -> PropertyConstraints:
    """The constraints of one property shape."""
    dt, kind, ml = shapes.value(ps, SH.datatype), shapes.value(ps, SH.nodeKind), shapes.value(ps, SH.minLength)
    return PropertyConstraints(
        tuple(x for lst in shapes.objects(ps, SH["in"]) for x in Collection(shapes, lst)),
        tuple(shapes.objects(ps, SH.hasValue)),
        tuple((str(p), str(shapes.value(ps, SH.flags) or "")) for p in shapes.objects(ps, SH.pattern)),
        dt, kind in (SH.IRI, SH.BlankNodeOrIRI) or (ps, SH["class"], None) in shapes,
        dt is not None or kind == SH.Literal, int(ml) if ml is not None else 0)


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
        text = generate(str(hint.value), hint.flags) if hint.kind == "regex" else hint.value
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
                added |= self._missing_values(v, v.path, graph, shapes)
        return sorted(added, key=nt_line)

    def _missing_values(self, v: Violation, path: URIRef, graph: Graph, shapes: Graph) -> set:
        """The values a focus node lacks to reach the shape's sh:minCount on its path (`v.path`, a predicate)."""
        focus = v.focus
        have = set(graph.objects(focus, path))
        need = int(str(shapes.value(v.shape, SH.minCount) or 1)) - len(have)
        c = property_constraints(shapes, graph, path)
        cq = CompetencyQuestion("violation", "", "ASK {}")
        pool = [x for x in self._values(cq, graph, shapes, focus, path, Variable(local_name(path)), [])
                if x not in have and not str(x).startswith(self.namespace)]
        if c.literal and not c.iri:
            text = self._default_text(focus, path, c)
            pool += [self._literal(f"{text} {i}", c) for i in range(2, need + 2)]
        else:
            named = set(c.in_values) | set(c.has_values)
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
        new = sorted({t for t in ground if t not in trial}, key=nt_line)
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
        iri = c.iri and not c.literal
        found = list(islice(graph.objects(subject, predicate), MAX_CANDIDATES))
        found += [*c.has_values, *c.in_values]
        for pat, flags in c.patterns:
            text = generate_iri(pat, flags, local_name(self._fresh(cq, subject, var))) if iri else generate(pat, flags)
            found += [] if text is None else [URIRef(text) if iri else self._literal(text, c)]
        found += [h if isinstance(h, Literal | URIRef) else self._literal(str(h), c) for h in hints]
        found += [self._fresh(cq, subject, var)] if iri or not c.literal else []
        found += [self._literal(self._default_text(subject, predicate, c), c)]
        good = [x for x in found if _allowed(x, c)] or found
        return list(dict.fromkeys(good))[:MAX_CANDIDATES]

    def _literal(self, text: str, c: PropertyConstraints) -> Literal:
        """A literal of the constrained datatype (plain for xsd:string)."""
        dt = c.datatype
        return Literal(text) if dt in (None, XSD.string) else Literal(text, datatype=dt)

    def _default_text(self, subject, predicate, c: PropertyConstraints) -> str:
        """A readable default value: a datatype default, or `<property> of <subject>` padded to minLength."""
        default = "" if c.datatype in (None, XSD.string) else str(default_literal(c.datatype))
        if default:
            return default
        text = f"{local_name(predicate)} of {local_name(subject)}"
        return text + "." * max(0, c.min_length - len(text))

    def _fresh(self, cq, subject, var) -> URIRef:
        """A deterministic fresh IRI: namespace + subject name (or CQ id) + variable name."""
        anchor = local_name(subject) if isinstance(subject, URIRef) else cq.id
        return URIRef(f"{self.namespace}{anchor}-{var}")


def _allowed(value, c: PropertyConstraints) -> bool:
    """Whether a candidate meets the sh:in / sh:pattern / minLength constraints collected for its property."""
    if c.in_values and value not in c.in_values:
        return False
    if c.has_values and value not in c.has_values:
        return False
    if isinstance(value, BNode):
        return False
    text = str(value)
    if any(not re.search(p, text, re.I if "i" in f else 0) for p, f in c.patterns):
        return False
    return isinstance(value, URIRef) or len(text) >= c.min_length


def _variable_order(triples) -> list:
    """Variables in the order they must be chosen: subjects before the objects that hang off them."""
    order: list = []
    for s, _, o in triples:
        for t in (s, o):
            if isinstance(t, Variable) and t not in order:
                order.append(t)
    subjects = {s for s, _, _ in triples}
    return sorted(order, key=lambda v: (v not in subjects, order.index(v)))
