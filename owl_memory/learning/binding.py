"""Binding a judge rule to a question by structure: the question, its mentions as slots, against the rule's form.

A rule's question form is the text it was learned from with each parameter's mention replaced by "{p1}". A task
applies to the rule when its text has that form exactly (the slots matching any text), or else when it matches the
form up to this normalization:
- case and sentence punctuation (PUNCTUATION: ? . ! : ( ) quotes - /) are ignored; so are the articles a, an,
  the; other signs ({ } < > ...) must stand where the form has them;
- the interchangeable function words of INTERCHANGEABLE count as one ("which" ~ "what", "are" ~ "is", ...), a
  plural as its singular ("superclasses" ~ "superclass"), "what's" as "what is";
- a `PREFIX p: <ns>` the text defines is no part of its form (its prefix may name slots);
- clauses separated by "," or ";" may come in any order (at most MAX_CLAUSES clauses);
and in either case each slot names one term (mentions.Reader.resolve: an IRI with or without <>, a CURIE, a local
name or a label) of the parameter's role (class, property, individual) when the rule recorded one and the term is
typed (an untyped term, e.g. one the ontology only points to, has no role to contradict it), an individual sharing a
class (or superclass) with the one the rule was learned from (a department does not fill an employee's slot), and
a slot that appears twice names the same term twice; a literal parameter's slot holds a quoted text or, for a
number, a number. The `Bound` value says which way the question matched and how each slot named its term (for
the Judgment).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import permutations

from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from ..model import JudgeRule, Parameter
from ..model.judge_rules import placeholder
from .mentions import DEFINED as _DEFINED, Reader

MAX_TASK_CHARS = 2_000
MAX_SLOT_TOKENS = 8
MAX_CLAUSES = 3
MAX_STEPS = 20_000
ARTICLES = frozenset({"a", "an", "the"})
INTERCHANGEABLE = {"which": "what", "are": "is", "do": "does", "have": "has", "within": "in", "for": "of"}
PUNCTUATION = frozenset("?.!:()'\"-/")  # ignored outside slots; any other sign must be where the form has it
_SLOT = re.compile(r"\{(p\d+)\}")
_TOKEN = re.compile(r"<[^<>\s]+>|https?://[^\s<>\"'`{}|\\^]*[^\s<>\"'`{}|\\^.,;:!?)\]]|\"[^\"]*\"|"
                    r"[A-Za-z][\w.-]*:[A-Za-z_][\w-]*(?:\.[\w-]+)*|\{p\d+\}|\w+|[,;]|[^\s\w]")
_CONTRACTED = re.compile(r"\b(what|who|where|which|how|that)'s\b", re.IGNORECASE)
_NUMBER = re.compile(r"-?\d+(\.\d+)?")
_NUMERIC = {XSD.integer, XSD.decimal, XSD.double, XSD.float, XSD.int, XSD.long, XSD.gYear, XSD.nonNegativeInteger}


@dataclass(frozen=True)
class Bound:
    """A rule bound to a task: placeholder IRI -> term, and how the question matched (for the Judgment)."""

    bindings: dict
    explanation: str


@dataclass
class _State:
    """One binding's bounded search: the match steps taken, and each span's slot reading (span, parameter) -> term."""

    steps: int = 0
    read: dict = field(default_factory=dict)


@dataclass(frozen=True)
class _Token:
    """One token of a text: its normalized value, its kind ("word", "sep", "punct", "slot", "other") and span."""

    value: str
    kind: str
    start: int
    end: int


def bind(rule: JudgeRule, task: str, reader: Reader) -> Bound | None:
    """The rule's parameters bound from a task whose question has the rule's form (see the module docstring)."""
    text = " ".join(task.split())
    if len(text) > MAX_TASK_CHARS:  # slots match lazily: keep the match's cost bounded
        return None
    exact = _exact(rule, text, reader)
    if exact is not None:
        return exact
    shown = _CONTRACTED.sub(r"\1 is", _DEFINED.sub(" ", text))  # a PREFIX the text defines is no part of its form
    form, tokens = _tokens(rule.question), _tokens(shown)
    words = [t for t in form if t.kind in ("word", "slot", "other")]  # the form's articles and punctuation dropped
    state = _State()
    for order, ordered in _orders(tokens):
        found = _match(words, 0, ordered, 0, {}, rule, shown, reader, state, text)
        if found is not None:
            how = "its clauses reordered, " if order else ""
            return Bound({URIRef(placeholder(p)): t for p, (t, _) in found.items()},
                         f"matches the form {rule.question!r} up to case, punctuation and articles "
                         f"({how}{_named(found)})")
    return None


def literal_value(text: str, kind: str) -> Literal | None:
    """A literal parameter's value from its slot's text (quotes stripped) with the original's language or datatype;
    None when a number's slot does not hold a number."""
    lang = kind.split("@", 1)[1] if "@" in kind else None
    datatype = URIRef(kind.split("^^", 1)[1]) if "^^" in kind else None
    value = text.strip().strip("\"'")
    if not value or (datatype is not None and datatype in _NUMERIC and not _NUMBER.fullmatch(value)):
        return None
    return Literal(value, lang=lang, datatype=datatype)


def _exact(rule: JudgeRule, text: str, reader: Reader) -> Bound | None:
    """The bindings of a task whose text has the rule's question form exactly (slots shortest first)."""
    parts = _SLOT.split(rule.question)
    seen: set[str] = set()
    pattern = ""
    for i, part in enumerate(parts):
        pattern += re.escape(part) if i % 2 == 0 else f"(?P={part})" if part in seen else f"(?P<{part}>.+?)"
        seen |= {part} if i % 2 else set()
    m = re.fullmatch(pattern, text)
    if m is None:
        return None
    found = {}
    for p in rule.parameters:
        slot = _slot_term(m.group(p.name), p, text, reader)
        if slot is None:
            return None
        found[p.name] = slot
    return Bound({URIRef(placeholder(p)): t for p, (t, _) in found.items()},
                 f"has the form {rule.question!r} exactly ({_named(found)})")


def _slot_term(text: str, param: Parameter, context: str, reader: Reader) -> tuple | None:
    """(term, how) a slot's text names for a parameter, of the parameter's role; None when it names none."""
    if param.kind.startswith("literal"):
        value = literal_value(text, param.kind)
        return None if value is None else (value, "a literal")
    named = reader.resolve(text, context)
    if named.term is None or (param.role and reader.role(named.term) not in (param.role, "")):
        return None
    classes = reader.classes(named.term)
    if param.classes and classes and not classes & set(param.classes):  # an individual of another kind
        return None
    return named.term, named.how


def _tokens(text: str) -> list[_Token]:
    """A text's tokens, words normalized (case-folded, interchangeable words as one)."""
    out = []
    for m in _TOKEN.finditer(text):
        raw = m.group(0)
        kind = "slot" if _SLOT.fullmatch(raw) else "sep" if raw in ",;" else "word" if re.fullmatch(r"\w+", raw) \
            else "punct" if raw in PUNCTUATION else "other"
        value = _word(raw) if kind == "word" else raw[1:-1] if kind == "slot" else raw
        out.append(_Token(value, "article" if kind == "word" and value in ARTICLES else kind, m.start(), m.end()))
    return out


def _word(word: str) -> str:
    """A word as forms compare it: case-folded, an interchangeable word as its class, a plural as its singular."""
    w = INTERCHANGEABLE.get(word.casefold(), word.casefold())
    if len(w) <= 3 or w.endswith("ss"):
        return w
    return w[:-3] + "y" if w.endswith("ies") else w[:-2] if re.search(r"(s|x|ch|sh)es$", w) else \
        w[:-1] if w.endswith("s") else w


def _orders(tokens: list[_Token]):
    """(reordered?, tokens) for the task's clauses in their order, then in every other order."""
    clauses: list[list[_Token]] = [[]]
    for t in tokens:
        clauses[-1].append(t) if t.kind != "sep" else clauses.append([])
    yield False, [t for t in tokens if t.kind != "sep"]
    if 1 < len(clauses) <= MAX_CLAUSES:
        for order in list(permutations(clauses))[1:]:
            yield True, [t for c in order for t in c]


def _match(form: list[_Token], i: int, tokens: list[_Token], j: int, found: dict, rule: JudgeRule, text: str,
           reader: Reader, state: _State, context: str) -> dict | None:
    """Slot name -> (term, how) when form[i:] matches tokens[j:] (punctuation skipped outside slots); the tokens'
    spans are in `text`, the task's PREFIXes in `context`."""
    state.steps += 1
    if state.steps > MAX_STEPS:
        return None
    while j < len(tokens) and tokens[j].kind == "punct":
        j += 1
    if i == len(form):
        return dict(found) if all(t.kind == "article" for t in tokens[j:]) else None
    if j == len(tokens):
        return None
    if tokens[j].kind == "article":  # skipped, or (for a slot) the first word of a name ("The Beatles")
        skipped = _match(form, i, tokens, j + 1, found, rule, text, reader, state, context)
        if skipped is not None or form[i].kind != "slot":
            return skipped
    if form[i].kind != "slot":
        same = tokens[j].value.casefold() == form[i].value.casefold()
        return _match(form, i + 1, tokens, j + 1, found, rule, text, reader, state, context) if same else None
    param = next(p for p in rule.parameters if p.name == form[i].value)
    after = form[i + 1].value.casefold() if i + 1 < len(form) and form[i + 1].kind != "slot" else None
    for n in range(1, MAX_SLOT_TOKENS + 1):
        span = tokens[j:j + n]
        if len(span) < n:
            break
        rest = [t.value.casefold() for t in tokens[j + n:] if t.kind not in ("punct", "article")]
        if after is not None and rest[:1] != [after]:  # the form's next word must follow the slot
            continue
        key = (span[0].start, span[-1].end, param.name)
        if key not in state.read:
            state.read[key] = _slot_term(text[span[0].start:span[-1].end], param, context, reader)
        slot = state.read[key]
        if slot is None or (param.name in found and found[param.name][0] != slot[0]):
            continue
        done = _match(form, i + 1, tokens, j + n, {**found, param.name: slot}, rule, text, reader, state, context)
        if done is not None:
            return done
    return None


def _named(found: dict) -> str:
    """How each slot named its term, for the Judgment."""
    return "; ".join(f"{{{p}}} = {t} by {how}" for p, (t, how) in sorted(found.items()))
