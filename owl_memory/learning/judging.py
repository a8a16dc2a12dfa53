"""Judges: decide whether a run succeeded, deterministically against gold when there is gold, else with an LM.

Every judge returns a `Judgment`. Deterministic judges:
- `judge_sparql`: the answer's terms against the gold SELECT's results over the task's ontology (a set match,
  precision and recall in the reason). Answer terms are full IRIs, CURIEs with the ontology's prefixes, and bare
  words that are the local name of a term of the ontology or equal a gold literal; other words are ignored.
- `judge_answer`: normalized exact match (a string) or set match (a list).
- `judge_ask`: an ASK query over the graph the run produced (the ontology plus the answer when it is RDF).
- `judge_shacl`: SHACL conformance of the run's graph.
- `judge_structural`: the agent's SPARQL against a reference query, by structure (triple patterns and filters
  modulo variable names), used when the reference's endpoint cannot be queried.
Without gold, the LLM judge (owl_memory.llm.judge) sees the task, the answer and bounded evidence.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import replace

from rdflib import BNode, Graph, Literal, URIRef, Variable
from rdflib.term import Identifier

from ..adapters import rdflib as rdf, sparql as sparql_text
from ..adapters.sparql import Answer
from ..errors import ConfigError, LoadError, QueryFailed, QueryRefused
from ..llm import judge_llm
from ..model import RunMetrics
from ..model.judgments import EMPTY_GOLD, EXPECT_KINDS, EXPECT_OPTIONS, ITERATION_CAP, Expect, Judgment
from ..rdfio import load_graph
from ..vocab import local_name
from .endpoint_judge import judge_on_endpoint
from .verdicts import MAX_MISSING, compare_sets, set_verdict

_IRI = re.compile(r"<?(https?://[^\s<>\"'`,;]+)>?")
_SPLIT = re.compile(r"[\s,;]+|\band\b")
QUERY_KINDS = {"sparql": "SELECT", "ask": "ASK", "query": None}  # expect kinds whose gold is a query: its form
BUILTIN = ("http://www.w3.org/1999/02/22-rdf-syntax-ns#", "http://www.w3.org/2000/01/rdf-schema#",
           "http://www.w3.org/2002/07/owl#", "http://www.w3.org/2001/XMLSchema#")  # no bare-word matches here


def normalize(text) -> str:
    """NFC, case-folded, single-spaced, without surrounding quotes and trailing punctuation."""
    return _tidy(text).casefold()


def _tidy(text) -> str:
    """NFC, single-spaced, without surrounding quotes and trailing punctuation (case kept)."""
    t = " ".join(unicodedata.normalize("NFC", str(text)).split())
    return t.strip().strip("\"'`").rstrip(".!").strip()


# ---- gold answers ---------------------------------------------------------------------------------------------

def judge_answer(answer, expected) -> Judgment:
    """Normalized exact match for a string, set match (precision / recall) for a list."""
    if isinstance(expected, list | tuple | set):
        got = answer if isinstance(answer, list | tuple) else [p for p in re.split(r"[,;\n]|\band\b", str(answer))]
        return set_verdict({normalize(a) for a in got if normalize(a)}, {normalize(e) for e in expected}, "answer")
    ok = normalize(answer) == normalize(expected)
    return Judgment(ok, "the answer equals the expected answer" if ok else "the answer differs from the expected "
                    "answer (normalized exact match)", "high", "answer", () if ok else (str(expected)[:200],),
                    "" if ok else "wrong-answer")


def judge_sparql(answer, gold: str, ontology, task: str = "", empty: bool = False) -> Judgment:
    """The answer's terms compared as a set with the gold SELECT's results over the task's ontology.

    Terms the task itself names (e.g. the class whose subclasses are asked for) do not count against precision.
    """
    g = load_graph(ontology)
    try:
        answer_rows = sparql_text.evaluate(g, gold)
    except (QueryFailed, QueryRefused) as e:
        raise LoadError(f"the gold query does not run over the ontology ({e}); fix expect.sparql in the "
                        "curriculum") from e
    return judge_terms(answer, select_terms(answer_rows), g, task, empty)


def select_rows(result: Answer) -> tuple[tuple, ...]:
    """The rows of a SELECT query's answer; LoadError when the query was of another form."""
    if result.kind != "SELECT":
        raise LoadError(f"the gold query's form is {result.kind}, not SELECT; give expect.sparql a SELECT of the "
                        "answer's terms (an ASK goes in expect.ask)")
    return result.rows


def select_terms(result: Answer) -> set[Identifier]:
    """Every term of a SELECT query's answer rows (unbound cells left out); LoadError for another form."""
    return {term for row in select_rows(result) for term in row if term is not None}


def gold_query(expect: Expect) -> str:
    """The query text of an expect whose gold is a query (kind sparql, ask or query); ConfigError otherwise."""
    if expect.kind not in QUERY_KINDS or not isinstance(expect.gold, str):
        raise ConfigError(f"expect.{expect.kind} must be a SPARQL query string, got {type(expect.gold).__name__}")
    return expect.gold


def judge_terms(answer, gold_terms: set[Identifier], g: Graph, task: str = "", empty: bool = False) -> Judgment:
    """The answer's terms compared as a set with gold terms already known (what judge_sparql does once its gold has
    run over the graph `g`); terms the task names do not count against precision. A gold that names nothing judges
    only a task whose expected answer is nothing (`empty`); otherwise the run is not judged a success (EMPTY_GOLD)."""
    return compare_sets(*term_sets(answer, gold_terms, g, task), "sparql", empty)


def term_sets(answer, gold_terms: set[Identifier], g: Graph, task: str = "") -> tuple[set[str], set[str]]:
    """(the answer's term keys, the gold's term keys) as judge_terms compares them; terms the task names that are
    not gold are left out of the answer's."""
    gold_keys, names = {_key(t) for t in gold_terms}, _local_names(g)  # the graph's names, read once for both texts
    return _terms(answer, g, gold_terms, names) - (_terms(task, g, set(), names) - gold_keys), gold_keys


def answer_terms(answer, g: Graph, gold_terms: set[Identifier]) -> set[str]:
    """The set of terms an answer (a text, or a list of texts) names: IRIs, CURIEs, local names of the ontology's
    terms, gold literals."""
    return _terms(answer, g, gold_terms, _local_names(g))


def _terms(answer, g: Graph, gold_terms: set[Identifier], names: dict[str, set[str]]) -> set[str]:
    """answer_terms, given the graph's local names (_local_names(g))."""
    items = [str(a) for a in answer] if isinstance(answer, list | tuple) else [str(answer)]
    prefixes = {p: str(ns) for p, ns in g.namespaces() if p}
    literals = sorted(((_phrase(t), _key(t)) for t in gold_terms if isinstance(t, Literal) and _tidy(t)),
                      key=lambda pair: -len(pair[1]))
    found: set[str] = set()
    for item in items:
        item = unicodedata.normalize("NFC", item)
        for phrase, key in literals:  # longest first; a quoted literal's words are not read again as term names
            if phrase.search(item):
                found.add(key)
                item = phrase.sub(" ", item)
        found |= {_key(URIRef(iri)) for iri in _IRI.findall(item)}
        rest = _IRI.sub(" ", item)
        for word in _SPLIT.split(rest):
            word = word.strip("\"'`()[]{}.:!?")
            if ":" in word and word.split(":", 1)[0] in prefixes:
                found.add(_key(URIRef(prefixes[word.split(":", 1)[0]] + word.split(":", 1)[1])))
            elif word:
                found |= _named(word, names, {_key(t) for t in gold_terms})
    return found


def _phrase(literal: Literal) -> re.Pattern:
    """A gold literal as a whole-word, case-insensitive pattern that allows any run of spaces between its words."""
    words = _tidy(literal).split()
    return re.compile(r"(?<!\w)" + r"\s+".join(re.escape(w) for w in words) + r"(?!\w)", re.IGNORECASE)


def _named(word: str, names: dict[str, set[str]], gold: set[str]) -> set[str]:
    """The one term a bare word names: exact-case local names first, a gold term when several match."""
    keys = names.get(word) or names.get(word.casefold()) or set()
    return {min(keys & gold or keys)} if keys else set()


def _local_names(g: Graph) -> dict[str, set[str]]:
    """Local name (as written and case-folded) -> keys of the IRIs of the graph that end with it."""
    out: dict[str, set[str]] = {}
    for term in set(g.subjects()) | set(g.objects()):
        if isinstance(term, URIRef) and not str(term).startswith(BUILTIN):
            out.setdefault(local_name(term), set()).add(_key(term))
            out.setdefault(local_name(term).casefold(), set()).add(_key(term))
    return out


def _key(term) -> str:
    """Comparable key of an RDF term: IRIs as they are, literals normalized."""
    return str(term) if isinstance(term, URIRef) else "literal:" + normalize(term)


# ---- graphs ---------------------------------------------------------------------------------------------------

def run_graph(ontology=None, answer: str | None = None) -> Graph:
    """The graph a run produced: its ontology plus the answer when the answer parses as Turtle."""
    g = Graph()
    if ontology is not None:
        g += load_graph(ontology)
    if answer and answer.strip():
        try:
            g += rdf.parse_text(answer, "turtle")
        except LoadError:  # an answer that is not Turtle adds nothing
            pass
    return g


def judge_ask(graph: Graph, ask: str) -> Judgment:
    """An ASK query over the run's graph: success when it answers true."""
    try:
        result = sparql_text.evaluate(graph, ask)
    except (QueryFailed, QueryRefused) as e:
        raise LoadError(f"expect.ask does not run ({e}); fix the ASK query") from e
    if result.kind != "ASK":
        raise LoadError("expect.ask must be an ASK query")
    ok = bool(result.ask)
    return Judgment(ok, f"the gold ASK query answers {str(ok).lower()} over the run's graph", "high", "ask",
                    () if ok else ("ASK pattern",), "" if ok else "ask-check-failed")


def judge_shacl(graph: Graph, shapes) -> Judgment:
    """SHACL conformance of the run's graph against the task's shapes."""
    from ..adapters import pyshacl as shacl

    conforms, report, _ = shacl.validate(graph, shacl_graph=load_graph(shapes), inference="none")
    n = len(set(report.subjects(URIRef("http://www.w3.org/ns/shacl#resultSeverity"), None)))
    return Judgment(bool(conforms), f"SHACL: {'conforms' if conforms else f'{n} violation(s)'}", "high", "shacl",
                    () if conforms else (f"{n} violation(s)",), "" if conforms else "shacl-violation")


# ---- structure of a query -------------------------------------------------------------------------------------

def query_structure(query: str) -> Counter[tuple[str, object]]:
    """A query's triple patterns and filters with variables renamed canonically, as a multiset."""
    try:
        parsed = sparql_text.parse(query)
    except sparql_text.QuerySyntaxError as e:
        raise LoadError(f"not a SPARQL query ({str(e)[:160]})") from e
    triples, filters = sparql_text.patterns(parsed)
    names = canonical_names(triples)
    out: Counter[tuple[str, object]] = Counter(("triple", tuple(names.get(t, _show(t)) for t in tp)) for tp in triples)
    out.update(("filter", _rename(str(sparql_text.expression_key(f)), names)) for f in filters)
    return out


def canonical_names(triples: list[tuple]) -> dict[Identifier, str]:
    """Variables (and blank nodes) renamed by where they occur, so two queries differing in names compare equal."""
    occurrences: dict = {}
    for tp in triples:
        masked = tuple("?" if isinstance(t, Variable | BNode) else _show(t) for t in tp)
        for pos, t in enumerate(tp):
            if isinstance(t, Variable | BNode):
                occurrences.setdefault(t, []).append((pos, masked))
    sig = {v: tuple(sorted(o)) for v, o in occurrences.items()}
    ordered = sorted(sig, key=lambda v: (sig[v], str(v)))
    return {v: f"?v{sorted(sig.values()).index(sig[v])}" for v in ordered}


def _show(term) -> str:
    """A term as text for comparison."""
    return f"?{term}" if isinstance(term, Variable) else term.n3() if hasattr(term, "n3") else str(term)


def _rename(text: str, names: dict) -> str:
    """A filter's text with variables renamed canonically."""
    for v, new in sorted(names.items(), key=lambda kv: -len(str(kv[0]))):
        text = re.sub(rf"Variable\('{re.escape(str(v))}'\)", f"Variable('{new}')", text)
    return text


def judge_structural(query: str, reference: str, endpoint: str | None = None) -> Judgment:
    """The agent's query against the reference by structure (patterns and filters modulo variable names)."""
    where = f"the endpoint {endpoint} was not queried" if endpoint else "no endpoint was given"
    try:
        got = query_structure(query)
    except LoadError:
        return Judgment(False, f"structural judge ({where}): the answer is not a parseable SPARQL query", "medium",
                        "structural", ("a SPARQL query",), "no-query")
    want = query_structure(reference)
    hit = sum((got & want).values())
    precision, recall = hit / max(1, sum(got.values())), hit / max(1, sum(want.values()))
    ok = got == want
    missing = tuple(sorted(str(k[1])[:120] for k in (want - got)))[:MAX_MISSING]
    return Judgment(ok, f"structural judge ({where}): {hit} of {sum(want.values())} reference patterns/filters "
                    f"matched modulo variable names (precision {precision:.2f}, recall {recall:.2f})", "medium",
                    "structural", missing, "" if ok else "wrong-query-structure")


# ---- dispatch -------------------------------------------------------------------------------------------------

def judge(expect: Expect | dict | None, answer, *, ontology=None, task: str = "", lm=None,
          evidence: str = "") -> Judgment:
    """Judge one answer by the task's `expect` (an Expect or its dict form), else with the LLM judge."""
    expect = as_expect(expect)
    if expect is None:
        if lm is None:
            raise ConfigError("no gold (expect) and no LM for the LLM judge: pass expect=... or lm=...")
        return judge_llm(task, str(answer), evidence, lm)
    if expect.kind == "sparql":
        if ontology is None:
            raise ConfigError("expect.sparql needs the task's ontology: pass ontology=PATH")
        return judge_sparql(answer, gold_query(expect), ontology, task, expect.empty)
    if expect.kind == "answer":
        return judge_answer(answer, expect.gold)
    if expect.kind == "ask":
        return judge_ask(run_graph(ontology, str(answer)), gold_query(expect))
    if expect.kind == "shacl":
        return judge_shacl(run_graph(ontology, str(answer)), expect.gold)
    return judge_on_endpoint(str(answer), expect, task, term_sets) or \
        judge_structural(str(answer), gold_query(expect), expect.endpoint)


def as_expect(expect: Expect | dict | None) -> Expect | None:
    """An Expect from an Expect or its dict form; None for no gold (an empty dict too); ConfigError when malformed."""
    if isinstance(expect, dict):
        return Expect.from_dict(expect) if expect else None
    return expect


def check_expect(expect: dict) -> Expect:
    """The Expect of a curriculum's expect block; ConfigError when it is malformed (so a curriculum fails at load,
    not mid-run): exactly one kind, and its query valid SPARQL of the kind's form (sparql: SELECT, ask: ASK)."""
    keys = set(expect) - set(EXPECT_OPTIONS)
    if len(keys) != 1 or not keys <= set(EXPECT_KINDS):
        raise ConfigError(f"expect needs exactly one of {', '.join(EXPECT_KINDS)}, got {sorted(expect)}")
    checked = Expect.from_dict(expect)
    if checked.kind in QUERY_KINDS:
        try:
            parsed = sparql_text.parse(gold_query(checked))
        except sparql_text.QuerySyntaxError as e:
            raise ConfigError(f"expect.{checked.kind} is not valid SPARQL ({str(e)[:120]})") from e
        wanted = QUERY_KINDS[checked.kind]
        if wanted and sparql_text.form(parsed) != wanted:
            raise ConfigError(f"expect.{checked.kind} must be a query of form {wanted}, got "
                              f"{sparql_text.form(parsed)}; a SELECT of the answer's terms goes in expect.sparql, an "
                              "ASK in expect.ask")
    return checked


def capped(judgment: Judgment, metrics: RunMetrics, max_iters: int) -> Judgment:
    """A run that reached its iteration cap without SUBMIT (dspy forced an answer out of it) fails with failure mode
    ITERATION_CAP, whatever that forced answer was worth (the judge's verdict on it is kept in the reason); a run that
    submitted keeps its judgment, and so does one whose gold answers nothing (EMPTY_GOLD: nothing is learned from
    it either way)."""
    if metrics.converged or judgment.failure_mode == EMPTY_GOLD:
        return judgment
    return replace(judgment, success=False, failure_mode=ITERATION_CAP,
                   reason=f"the run reached its iteration cap ({max_iters}) without SUBMIT; its forced answer: "
                          f"{judgment.reason}")
