"""Annotation families: a term's label, the term that has a label, a term's comment and its definition."""

from __future__ import annotations

from ...vocab import local_name
from ..judging import normalize
from .registry import ENGLISH, family

MAX_TEXT = 300  # longer comments and definitions make no fair quoting task


def _not_its_name(text, term) -> bool:
    """True when `text` is not just the term's local name again (a label that only repeats it asks nothing)."""
    return normalize(text) != local_name(term).casefold()


def one_label(view, b, answers) -> bool:
    """One English label that says more than the term's local name."""
    return len(answers) == 1 and _not_its_name(next(iter(answers)), b["entity"])


def one_text(view, b, answers) -> bool:
    """One English text short enough to quote."""
    return len(answers) == 1 and len(str(next(iter(answers)))) <= MAX_TEXT


def label_names_more(view, b, answers) -> bool:
    """A one-line label without double quotes that is not just the local name of a term that carries it."""
    text = str(b["label"])
    return '"' not in text and "\n" not in text and all(_not_its_name(text, a) for a in answers)


@family("label", "annotation", needs="a term with one English rdfs:label other than its local name",
        where=f"?entity rdfs:label ?answer . FILTER(isLiteral(?answer) && {ENGLISH.format('?answer')})",
        keep=one_label)
def label(view, b) -> str:
    """A term's label."""
    return f"What is the label (rdfs:label) of {view.exact(b['entity'])}?"


@family("labelled", "annotation", needs="a term with an English rdfs:label other than its local name",
        where=f"?answer rdfs:label ?text . FILTER(isIRI(?answer) && str(?text) = ?label && {ENGLISH.format('?text')})",
        listing=f"?answer rdfs:label ?text . FILTER(isIRI(?answer) && {ENGLISH.format('?text')}) "
                "BIND(str(?text) AS ?label)",
        binds=("label",), about=("answer",), keep=label_names_more)
def labelled(view, b) -> str:
    """The term that carries a label."""
    return f'Which term has the label "{b["label"]}"?'


@family("comment", "annotation", needs=f"a term with one English rdfs:comment of at most {MAX_TEXT} characters",
        where=f"?entity rdfs:comment ?answer . FILTER(isLiteral(?answer) && {ENGLISH.format('?answer')})",
        keep=one_text)
def comment(view, b) -> str:
    """A term's comment, quoted."""
    return f"What does the comment (rdfs:comment) on {view.named(b['entity'])} say? Quote it."


@family("definition", "annotation",
        needs=f"a term with one English skos:definition of at most {MAX_TEXT} characters",
        where=f"?entity skos:definition ?answer . FILTER(isLiteral(?answer) && {ENGLISH.format('?answer')})",
        keep=one_text)
def definition(view, b) -> str:
    """A term's definition, quoted."""
    return f"How does the ontology define {view.named(b['entity'])} (skos:definition)? Quote the definition."
