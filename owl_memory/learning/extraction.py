"""Extraction: distill at most `max_items` general memory items from one judged run.

Successes become Procedures, failures AntiPatterns (with `preventsFailureMode` from the judgment). Each item
applies to the task's ontology and task type, is about the classes and properties of the query that produced the
answer (om:aboutClass, om:aboutProperty; not the task's constants), and carries compiled fields where the run shows
them: `actionSchema` is that query's SPARQL pattern (agent.answering_query picks it from the run's agent_query events,
ontology_query and endpoint_query alike; the pattern is read on the parsed SPARQL algebra), with the task's constants
(terms the task names, every literal, and on an endpoint the instances the query names) lifted to parameters;
`verificationHook` names the check that judged the run. An endpoint run's items apply to the endpoint's vocabulary
(the run's ontology, else the namespaces of the terms the query is about) and carry the endpoint's key tag
(`endpoint-<16 hex>`, as its EndpointProfile does); a failed run's AntiPattern also names what failed in its query
(query_facts.QUERY_MODES: an empty result, a term the vocabulary does not have, an error class). An LLM extractor
(a DSPy signature) may write the prose; it reads a bounded outline of the trajectory, never the whole trace, and what
it returns is checked on its parsed form: wrong kinds, malformed items and items that copy the task's strings are
rejected and reported, never stored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from rdflib import Graph, Literal, URIRef
from rdflib.namespace import OWL, RDF, RDFS, SKOS

from ..adapters import sparql as sparql_text
from ..agent import answering_query
from ..errors import InvalidItem
from ..llm import Draft, llm_drafts, parse_draft
from ..model import (
    CompiledOperator,
    Event,
    ItemSpec,
    Iteration,
    Parameter,
    QueryRecipe,
    ToolCall,
    ToolResult,
    ToolSequence,
)
from ..model.judgments import Judgment
from ..vocab import STANDARD_PREFIXES, local_name
from .consolidation import action_key
from .families.view import english
from .judging import answer_terms, canonical_names
from .query_facts import endpoint_tags, instances, namespaces, query_failure, triples

MAX_ITEMS = 3
MAX_ABOUT = 8  # classes, and properties, an extracted item is about at most
_NAME_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")  # the words of a camelCase or snake_case name
_MAX_READABLE = 120  # characters of a summary's readable names of its terms
OUTLINE_CHARS = 3_000
_SHORT = STANDARD_PREFIXES  # namespace -> prefix
_ADVICE = {
    "missing-answer-terms": "the answer left out expected terms: check transitive closure (e.g. a + path) and "
                            "read every result row before answering",
    "extra-answer-terms": "the answer named terms that are not results: answer only with rows the query returned",
    "no-answer-terms": "the answer named no term of the ontology: answer with the IRIs or CURIEs the query returned",
    "wrong-answer": "the answer did not match: recompute it from the query results, not from memory",
    "wrong-query-structure": "the query's triple patterns or filters differ from what the question needs",
    "empty-result": "the query returned no rows: check each term against the vocabulary (endpoint_sample, "
                    "ontology_search) and drop a pattern at a time to find the one that matches nothing",
    "unknown-term": "the query used a term the vocabulary does not have: look the class or property up before "
                    "querying with it",
    "iteration-cap": "the run reached its iteration cap without SUBMIT: query sooner, print less, and SUBMIT as "
                     "soon as the rows answer the question",
    "query-error": "the query failed: read the error class, fix the SPARQL (PREFIXes, syntax, a LIMIT) and rerun it",
}


@dataclass(frozen=True)
class RunRecord:
    """What extraction reads about one finished run.

    Args:
        task: the task text; task_type: its type; ontology_iri: the ontology it ran over (None if none).
        answer: the submitted answer; run_id / trace_ref: provenance (trajectory blob key).
        events: the run's trajectory events (model/events.py); graph: the task's ontology (to recognize its constants).
    """

    task: str
    task_type: str
    ontology_iri: str | None
    answer: str
    run_id: str
    trace_ref: str | None
    events: tuple[Event, ...] = ()
    graph: Graph | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Extraction:
    """Items extracted from a run and what was rejected (with why)."""

    items: tuple[ItemSpec, ...]
    rejected: tuple[str, ...] = ()


# ---- what the run shows ---------------------------------------------------------------------------------------

def tools_used(events: Iterable[Event]) -> list[str]:
    """Tool names the agent called, in order, without repeats in a row."""
    names = [e.tool for e in events if isinstance(e, ToolCall)]
    return [n for i, n in enumerate(names) if i == 0 or names[i - 1] != n]


def lift(query: str, constants: set[str]) -> QueryRecipe | None:
    """The query's pattern as a recipe, with `constants` and every literal lifted to parameters."""
    try:
        parsed = sparql_text.parse(query)
    except sparql_text.QuerySyntaxError:  # an unparseable query compiles to nothing
        return None
    triples, filters = sparql_text.patterns(parsed)
    if not triples:
        return None
    names = canonical_names(triples)
    params: dict[str, tuple[str, str]] = {}  # constant -> (parameter name, kind)
    where = [[_term(t, names, constants, params) for t in tp] for tp in triples]
    return QueryRecipe("select" if sparql_text.form(parsed) == "SELECT" else "ask",
                       tuple(tuple(tp) for tp in sorted(where)), len(filters),
                       tuple(Parameter(p, k) for p, k in params.values()))


def _term(t, names: dict, constants: set[str], params: dict) -> str:
    """One pattern position: a canonical variable, a kept IRI, or a parameter for a task constant."""
    if t in names:
        return names[t]
    if isinstance(t, Literal) or (isinstance(t, URIRef) and str(t) in constants):
        key = str(t)
        if key not in params:
            params[key] = (f"$p{len(params) + 1}", "literal" if isinstance(t, Literal) else "iri")
        return params[key][0]
    if isinstance(t, URIRef):
        short = next((p + str(t)[len(ns):] for ns, p in _SHORT.items() if str(t).startswith(ns)), None)
        return short or f"<{t}>"
    return t.n3() if hasattr(t, "n3") else str(t)


def task_constants(record: RunRecord) -> set[str]:
    """The run's constants, as strings: IRIs the task and the answer name, and on an endpoint the instances its query
    names (query_facts.instances)."""
    named = set() if record.graph is None else answer_terms([record.task, record.answer], record.graph, set())
    return named | instances(answering_query(record.events), record.graph)


def forbidden_strings(record: RunRecord) -> set[str]:
    """Strings a general item must not contain: local names of the task's constants (4+ characters)."""
    names = {local_name(c) for c in task_constants(record) if not c.startswith("literal:")}
    return {n for n in names if len(n) >= 4}


def copies_task(spec: ItemSpec, forbidden: set[str], task: str, template: bool = False) -> str | None:
    """The first task-specific string a general item copies, or None. A `template` item (the rule-based one, whose
    title, summary, content and verification hook the extractor and the judge write from the task type, the failure
    mode, the judge and the pattern's kept predicates) is checked on what it takes from the run: its compiled
    action."""
    own = [] if template else [spec.title, spec.summary, spec.content, spec.verification_hook or ""]
    text = " ".join([*own, _json(spec.action_schema)]).casefold()
    if len(task.strip()) >= 20 and task.strip().casefold() in text:
        return "the task text"
    return next((f for f in sorted(forbidden) if f.casefold() in text), None)


# ---- rule-based items -----------------------------------------------------------------------------------------

def extract(record: RunRecord, judgment: Judgment, *, lm=None, max_items: int = MAX_ITEMS,
            contrast: tuple = ()) -> Extraction:
    """At most `max_items` items from one judged run: the LLM extractor's when an LM is given, else rule-based.

    `contrast` (MaTTS parallel): the compiled actions of the rollouts of the same task that succeeded; a failure is
    extracted against them (see contrasted)."""
    schema = compiled_action(record)
    compiled, note = contrasted(schema, judgment, contrast)
    base = _rule_item(record, judgment, schema, compiled, note)
    if lm is None:
        return _checked([base], record, max_items, template=True)
    return _drafted(record, judgment, lm, max_items, note, compiled, base)


def _drafted(record: RunRecord, judgment: Judgment, lm, max_items: int, note: str, compiled,
             base: ItemSpec) -> Extraction:
    """The LLM extractor's items (the rule-based `base` when none survives) and every rejected draft with why."""
    outcome = f"{'success' if judgment.success else 'failure'}: {judgment.reason}" + (f" {note}" if note else "")
    try:
        drafts = llm_drafts(record.task_type, outcome, outline(record.events), lm, max_items)
    except Exception as e:  # noqa: BLE001 - any LM or parse failure is recorded; the rule-based item stands in
        return Extraction(_checked([base], record, max_items, template=True).items,
                          (f"extractor failed: {type(e).__name__}",))
    items, rejected = [], []
    for n, d in enumerate(drafts, 1):
        try:
            items.append(_from_draft(parse_draft(d, judgment.success), record, judgment, compiled))
        except InvalidItem as e:
            rejected.append(f"draft {n}: {str(e)[:200]}")
    checked = _checked(items or [base], record, max_items, template=not items)
    return Extraction(checked.items, tuple(rejected) + checked.rejected)


def _checked(items: list[ItemSpec], record: RunRecord, max_items: int, template: bool = False) -> Extraction:
    """Drop general items that copy the task's strings (`template`: the items are the rule-based one, see
    copies_task); keep at most `max_items`."""
    forbidden, kept, rejected = forbidden_strings(record), [], []
    for spec in items:
        bad = copies_task(spec, forbidden, record.task, template) if spec.scope == "general" else None
        if bad:
            rejected.append(f"{spec.kind} {spec.title!r} copies a task-specific string ({bad})")
        else:
            kept.append(spec)
    return Extraction(tuple(kept[:max(0, int(max_items))]), tuple(rejected))


def compiled_action(record: RunRecord) -> QueryRecipe | ToolSequence | None:
    """The compiled action of the run: the lifted pattern of the query that produced its answer, else the tool
    sequence it followed."""
    query = answering_query(record.events)
    schema: QueryRecipe | ToolSequence | None = lift(query.sparql, task_constants(record)) if query else None
    if schema is None and tools_used(record.events):
        schema = ToolSequence(tuple(tools_used(record.events)[:12]))
    return schema


def contrasted(schema: CompiledOperator | None, judgment: Judgment,
               wins: tuple) -> tuple[CompiledOperator | None, str]:
    """A failed rollout against the rollouts of the same task that succeeded (MaTTS self-contrast): the action to
    compile into its AntiPattern and a contrast note. When a success ran the same action, the action is not at fault
    (the answer was), so none is compiled (an AntiPattern would forbid what just worked); otherwise the note names
    the action that succeeded instead."""
    if judgment.success or not wins:
        return schema, ""
    if schema is not None and action_key(schema) in {action_key(w) for w in wins}:
        return None, ("Contrast: the same pattern succeeded in a parallel rollout of this task, so the fault was in "
                      "the answer, not the pattern.")
    shown = next((w for w in wins if w), None)
    return schema, "Contrast: a parallel rollout of this task succeeded" + \
        (f" with: {_json(shown)}" if shown else ".")


def _rule_item(record: RunRecord, judgment: Judgment, schema: CompiledOperator | None,
               compiled: CompiledOperator | None,
               note: str = "") -> ItemSpec:
    """One Procedure (success) or AntiPattern (failure) written from the run's action (`compiled`: the part kept
    as its actionSchema; `note`: the self-contrast line, if any)."""
    kind_of = _readable(record.task_type)
    over = _predicates(schema) + _about_words(record)
    if judgment.success:
        title = f"{kind_of.capitalize()} questions: answer with one query pattern"
        summary = (f"Use for {kind_of} questions answered by one query over {over}; "
                   "not when the question needs a count or an aggregate.")
        content = "\n".join(["1. Run the pattern below with the question's terms bound to its parameters.",
                             "2. Read every result row through the results handle.",
                             "3. Answer with exactly the IRIs the rows hold, as CURIEs.",
                             f"Pattern: {_json(schema) if schema else 'none recorded'}"])
        return _spec("Procedure", title, summary, content, record, judgment, compiled, ())
    mode = judgment.failure_mode or "wrong-answer"
    failed = query_failure(answering_query(record.events), record.graph)
    modes = tuple(dict.fromkeys((mode, failed[0]) if failed else (mode,)))
    title = f"Avoid {_readable(mode)} on {kind_of} questions"
    summary = f"Use before answering {kind_of} questions with one query over {over}: this failed before ({mode})."
    content = "\n".join([f"Failure: {_ADVICE.get(mode, 'the run was judged wrong; recheck the query')}.",
                         *([f"Query failure ({failed[0]}: {failed[1]}): {_ADVICE[failed[0]]}."] if failed else []),
                         f"Failed pattern: {_json(schema) if schema else 'none recorded'}",
                         *([note] if note else [])])
    return _spec("AntiPattern", title, summary, content, record, judgment, compiled, modes)


def _about_words(record: RunRecord) -> str:
    """The local names of the terms the run's query is about, as a summary's words, then the words a reader would
    use for them: a compound name's parts and the terms' English labels in the run's ontology (" about Department,
    memberOf (member of, works in)"), so a question naming them finds the item by text (a search matches whole
    words, and "memberOf" is one)."""
    classes, properties = about_terms(record)
    terms = sorted(classes + properties, key=local_name)[:6]
    names = sorted({local_name(t) for t in terms})
    said = [" ".join(_NAME_WORDS.findall(n)).lower() for n in names]
    if record.graph is not None:
        said += [str(v).lower() for t in terms for p in (RDFS.label, SKOS.prefLabel)
                 for v in record.graph.objects(URIRef(t), p) if english(v)]
    own = {n.lower() for n in names}
    plain = [w for w in dict.fromkeys(" ".join(s.split()) for s in said) if w and w not in own]
    while len(", ".join(plain)) > _MAX_READABLE:
        plain.pop()
    readable = f" ({', '.join(plain)})" if plain else ""
    return f" about {', '.join(names)}{readable}" if names else ""


def vocabularies(record: RunRecord) -> tuple[str, ...]:
    """What an item of the run applies to: the run's ontology, else (an endpoint run without one) the namespaces of
    the terms its query is about."""
    classes, properties = about_terms(record)
    return (record.ontology_iri,) if record.ontology_iri else namespaces(classes + properties)


def about_terms(record: RunRecord) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The classes and properties the query that produced the run's answer used (the query its items compile),
    sorted, at most MAX_ABOUT each: classes are rdf:type objects and terms the run's ontology declares a class,
    properties the predicates. The task's constants are left out (the action schema lifts them to parameters, so the
    item is about the pattern, not the one question), and so are RDF, RDFS, OWL and XSD terms (they belong to no
    target ontology)."""
    patterns = triples(answering_query(record.events))
    declared = set(record.graph.subjects(RDF.type, OWL.Class)) if record.graph is not None else set()
    classes = {o for _, p, o in patterns if p == RDF.type} | \
        {t for s, _, o in patterns for t in (s, o) if t in declared}
    properties = {p for _, p, _ in patterns if p != RDF.type}
    skip = task_constants(record)

    def kept(terms: set) -> tuple[str, ...]:
        """The target-ontology IRIs among terms, sorted, capped."""
        return tuple(sorted(str(t) for t in terms if isinstance(t, URIRef) and str(t) not in skip
                            and not str(t).startswith(tuple(_SHORT))))[:MAX_ABOUT]

    return kept(classes), kept(properties)


def _spec(kind, title, summary, content, record: RunRecord, judgment: Judgment, schema, modes) -> ItemSpec:
    """An ItemSpec with the run's applicability, the terms its query was about, compiled fields and provenance."""
    classes, properties = about_terms(record)
    return ItemSpec(kind, title, summary, content, applies_to=vocabularies(record),
                    about_classes=classes, about_properties=properties, task_types=(record.task_type,),
                    failure_modes=modes, tags=("learned", judgment.judge,
                                               *endpoint_tags(answering_query(record.events))),
                    confidence={"high": 0.7, "medium": 0.6}.get(judgment.confidence, 0.5),
                    provenance={"run": record.run_id, **({"derived_from": record.trace_ref} if record.trace_ref
                                                         else {})},
                    action_schema=schema, verification_hook=_hook(judgment))


def _hook(judgment: Judgment) -> str:
    """The check that judged the run, as a verification hook (no gold text, which names the task's constants)."""
    return {"sparql": "judge sparql: answer terms equal the gold SELECT's results (precision 1, recall 1)",
            "answer": "judge answer: normalized exact or set match with the expected answer",
            "ask": "judge ask: the gold ASK holds over the run's graph",
            "shacl": "judge shacl: the run's graph conforms to the task's shapes",
            "structural": "judge structural: triple patterns and filters equal the reference's modulo variables",
            }.get(judgment.judge, f"judge {judgment.judge}")


def _readable(slug: str) -> str:
    """A slug as words ('missing-answer-terms' -> 'missing answer terms')."""
    return " ".join(str(slug).replace("_", "-").split("-")) or "general"


def _predicates(schema: CompiledOperator | None) -> str:
    """Local names of the kept predicates of a pattern, or its tools, for a summary line."""
    if isinstance(schema, ToolSequence):
        return ", ".join(schema.tools[:4])
    if not isinstance(schema, QueryRecipe):
        return "the ontology tools"
    preds = sorted({local_name(tp[1].strip("<>")) for tp in schema.where if not tp[1].startswith(("?", "$"))})
    return ", ".join(preds[:4]) or "parameters only"


def _json(op: CompiledOperator | None) -> str:
    """An operator's JSON as items quote it (sorted keys; {} for none)."""
    return json.dumps(op.to_json() if op is not None else {}, sort_keys=True)


# ---- what the LLM extractor reads and writes (owl_memory.llm.drafts asks the model) ----------------------------

def outline(events: Iterable[Event], cap: int = OUTLINE_CHARS) -> str:
    """A bounded outline of a trajectory: per iteration its code and output, clipped; at most `cap` characters."""
    lines = []
    for e in events:
        if isinstance(e, Iteration):
            lines.append(f"[{e.iteration}] code: {_clip(e.code, 300)} -> {_clip(e.output, 160)}")
        elif isinstance(e, ToolResult) and e.error:
            lines.append(f"  tool {e.tool} error: {_clip(e.message, 160)}")
    return _clip("\n".join(lines), cap)


def _clip(text, n: int) -> str:
    """At most n characters of text, marked when clipped."""
    text = str(text or "")
    return text if len(text) <= n else text[: n - 1] + "…"


def _from_draft(draft: Draft, record: RunRecord, judgment: Judgment, schema) -> ItemSpec:
    """The item of one checked LM draft: its prose with the run's applicability, compiled fields and provenance."""
    mode = draft.failure_mode or judgment.failure_mode or "wrong-answer"
    base = _spec(draft.kind, draft.title, draft.summary, draft.content, record, judgment, schema,
                 (mode,) if draft.kind == "AntiPattern" else ())
    return replace(base, tags=(*base.tags, "llm-extracted"))
