"""Mentions: how a text names a term of an ontology, as people write it (the one reader judge rules use).

A term is mentioned
- by its IRI, in angle brackets or bare (a bare IRI ends before trailing punctuation);
- by a CURIE whose prefix the ontology binds (the empty prefix too), the text itself defines (`PREFIX p: <ns>` or
  `@prefix p: <ns>`), or that conventionally names the term's namespace (vocab.CONVENTIONAL_PREFIXES); a prefix the
  ontology does not bind must give an IRI the ontology uses (the local part must name the term);
- by its local name or any of its names, quoted or not, case and whitespace folded, word-bounded (when compiling,
  a property's name counts only quoted: unquoted it is a word of the sentence, "Which works did Charles author?").
  Names are the English or untagged values of NAME_PROPERTIES (rdfs:label, skos:prefLabel, foaf:name,
  schema:name, and any property whose local name is `name`, as CK25's pv:name): labels of classes and
  properties, and the names a knowledge graph gives its instances alike; a person also by an honorific and the
  last word of their name ("Ms. Brant" for "Karen Brant") when that names one term.
A name is read first as a name a term carries, and only when no term carries it as a local name ("Format" is
dcterms:format's label, though dc:format ends with "format" too). A name that names two terms names none:
`resolve` says so (`Resolution.note`), and so does `find`, so a rule's notes can tell why a constant was not lifted.
"X (Y)" where X and Y name one term is one mention of it (the DUL curricula write "dul:Organization
(http://...DUL.owl#Organization)").

Each term also has a role, read from its rdf:type: "class", "property", "individual" (typed otherwise) or "", and
an individual its classes (its types and their superclasses).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rdflib import Graph, URIRef
from rdflib.namespace import FOAF, OWL, RDF, RDFS, SKOS

from ..vocab import CONVENTIONAL_PREFIXES, local_name
from .families.view import english, is_builtin

NAME_PROPERTIES = (RDFS.label, SKOS.prefLabel, FOAF.name, URIRef("http://schema.org/name"),
                   URIRef("https://schema.org/name"))
CLASS_TYPES = {OWL.Class, RDFS.Class, RDFS.Datatype}
PROPERTY_TYPES = {RDF.Property, OWL.ObjectProperty, OWL.DatatypeProperty, OWL.AnnotationProperty,
                  OWL.FunctionalProperty, OWL.TransitiveProperty, OWL.SymmetricProperty, OWL.InverseFunctionalProperty}
MAX_NAME_CHARS = 120
DEFINED = re.compile(r"(?:PREFIX|@prefix)\s+([A-Za-z][\w.-]*|):\s*<([^<>\s]+)>", re.IGNORECASE)
_BRACKETED = re.compile(r"<([^<>\"{}|^`\\\s]+)>")
_BARE = re.compile(r"https?://[^\s<>\"'`{}|\\^]*[^\s<>\"'`{}|\\^.,;:!?)\]]")
_CURIE = re.compile(r"([A-Za-z][\w.-]*|):([A-Za-z_][\w-]*(?:\.[\w-]+)*)")
_HONORIFIC = re.compile(r"(?:Mr|Mrs|Ms|Miss|Dr|Prof)\.?\s+([^\W\d_][\w'-]*)", re.IGNORECASE)
_PAIR = re.compile(r"(.+?)\s*\((.+)\)")


@dataclass(frozen=True)
class Resolution:
    """What a piece of text names: the term (None when it names none or several), how, and why not when None."""

    term: URIRef | None
    how: str = ""
    note: str = ""


@dataclass(frozen=True)
class Mention:
    """Where a text mentions a term: [start, end) in the text, the text there, and how it names the term."""

    start: int
    end: int
    form: str
    how: str


def fold(text: str) -> str:
    """A name as names are compared: case-folded, whitespace collapsed, surrounding quotes dropped."""
    return " ".join(str(text).split()).strip("\"'`").strip().casefold()


class Reader:
    """The mentions of one ontology's terms: its terms, their names, roles and the prefixes a text may use."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.terms = {t for t in (*graph.subjects(), *graph.objects()) if isinstance(t, URIRef) and not is_builtin(t)}
        spaces = {str(ns) for _, ns in graph.namespaces()}
        used = {ns for ns in spaces if any(str(t).startswith(ns) for t in self.terms)}
        self.own = {p: (str(ns), str(ns) in used) for p, ns in graph.namespaces()}
        self.labels: dict[str, set[URIRef]] = {}  # folded name -> the terms that carry it
        self.locals: dict[str, set[URIRef]] = {}  # folded local name -> the terms whose IRI ends with it
        self.family: dict[str, set[URIRef]] = {}  # folded last word of a name of two or more words -> the terms
        naming = {*NAME_PROPERTIES, *(p for p in set(graph.predicates()) if local_name(p) == "name")}
        for t in self.terms:
            self.locals.setdefault(fold(local_name(t)), set()).add(t)
            for name in {str(v) for p in naming for v in graph.objects(t, p) if english(v)}:
                if name.strip() and len(name) <= MAX_NAME_CHARS:
                    self.labels.setdefault(fold(name), set()).add(t)
                    if len(name.split()) > 1:
                        self.family.setdefault(fold(name.split()[-1]), set()).add(t)

    def named(self, name: str) -> list[URIRef]:
        """The terms a name names: those that carry it as a name, else those whose local name it is; "Ms. Brant"
        (an honorific and one word): those with a name of several words that ends with the word."""
        if m := _HONORIFIC.fullmatch(" ".join(name.split())):
            return sorted(self.family.get(fold(m.group(1))) or ())
        return sorted(self.labels.get(fold(name)) or self.locals.get(fold(name)) or ())

    def role(self, term) -> str:
        """"class", "property", "individual" or "" (untyped), from the term's rdf:type in the ontology."""
        types = set(self.graph.objects(term, RDF.type))
        return "class" if types & CLASS_TYPES else "property" if types & PROPERTY_TYPES or \
            str(term).startswith(str(RDF) + "_") else "individual" if types else ""

    def classes(self, term) -> frozenset[str]:
        """The classes of an individual (its rdf:type values outside RDF, RDFS, OWL and XSD) and their superclasses;
        empty for classes, properties and untyped terms."""
        out: set[str] = set()
        todo = [t for t in self.graph.objects(term, RDF.type) if isinstance(t, URIRef) and not is_builtin(t)]
        while todo:
            c = todo.pop()
            if str(c) not in out:
                out.add(str(c))
                todo += [s for s in self.graph.objects(c, RDFS.subClassOf)
                         if isinstance(s, URIRef) and not is_builtin(s)]
        return frozenset(out)

    def prefixes(self, text: str) -> list[tuple[str, str, bool]]:
        """(prefix, namespace, trusted) a text may use: the ontology's own (trusted when a term of the ontology is in
        the namespace: rdflib binds prefixes of its own to every graph), then the text's, then the conventional ones
        (a CURIE of an untrusted prefix must give a term of the ontology)."""
        own = [(p, ns, used) for p, (ns, used) in self.own.items()]
        defined = [(p, ns, False) for p, ns in DEFINED.findall(text)]
        return own + defined + [(p, ns, False) for p, spaces in CONVENTIONAL_PREFIXES.items() for ns in spaces]

    def resolve(self, text: str, context: str = "") -> Resolution:
        """The one term `text` names (see the module docstring); `context` is the whole text, for its PREFIXes."""
        text = " ".join(text.split()).strip()
        if m := _PAIR.fullmatch(text):
            first, second = self.resolve(m.group(1), context), self.resolve(m.group(2), context)
            if first.term is not None and first.term == second.term:
                return Resolution(first.term, f"{first.how} and {second.how}")
        if m := _BRACKETED.fullmatch(text) or _BARE.fullmatch(text):
            return Resolution(URIRef(m.group(1) if m.re is _BRACKETED else m.group(0)), "IRI")
        if m := _CURIE.fullmatch(text):
            for prefix, ns, trusted in self.prefixes(context or text):
                if prefix == m.group(1) and (trusted or URIRef(ns + m.group(2)) in self.terms):
                    return Resolution(URIRef(ns + m.group(2)), f"CURIE {prefix}:")
        named = self.named(text)
        if len(named) == 1:
            return Resolution(named[0], "name")
        note = f"{text!r} names {len(named)} terms ({', '.join(map(str, named[:3]))}): it names none" if named else ""
        return Resolution(None, "", note)

    def find(self, term: URIRef, text: str) -> tuple[Mention | None, str]:
        """The first mention of `term` in `text` (None when there is none) and a note when a name of it was left
        out because it names other terms too. Builtin terms (RDF, RDFS, OWL, XSD) count only by IRI or CURIE."""
        found, notes = [], []
        for how, pattern in self._patterns(term, text):
            for m in re.finditer(pattern, text, re.IGNORECASE if how == "name" else 0):
                if how == "name" and m.group(0)[0] not in "\"'`" and self.role(term) == "property":
                    continue  # a property's unquoted name is a word of the sentence ("did Charles author")
                if how == "name" and self.named(m.group(0)) != [term]:  # names another term, or two
                    notes.append(self.resolve(m.group(0)).note)
                    continue
                found.append(Mention(m.start(), m.end(), m.group(0), how))
                break
        if not found:
            return None, "; ".join(sorted(set(n for n in notes if n)))
        first = min(found, key=lambda f: (f.start, -f.end))
        return self._paired(first, term, text), ""

    def _patterns(self, term: URIRef, text: str) -> list[tuple[str, str]]:
        """(how, regex) of each way `text` may write `term`."""
        iri = str(term)
        out = [("IRI", re.escape(f"<{iri}>")), ("IRI", r"(?<![<\w])" + re.escape(iri) + r"(?![\w/#>-])")]
        out += [("CURIE", r"(?<![\w:/#])" + re.escape(f"{p}:{iri[len(ns):]}") + r"(?![\w:-]|\.\w)")
                for p, ns, trusted in self.prefixes(text) if iri.startswith(ns) and len(iri) > len(ns)
                and _CURIE.fullmatch(f"{p}:{iri[len(ns):]}") and (trusted or term in self.terms)]
        if not is_builtin(term):
            names = sorted({n for index in (self.labels, self.locals) for n, ts in index.items() if term in ts},
                           key=lambda n: (-len(n), n))
            out += [("name", r"(?<![\w:/#])[\"'`]?" + r"\s+".join(map(re.escape, n.split())) + r"[\"'`]?(?![\w:])")
                    for n in names]
            out += [("name", r"(?<![\w:/#])(?:Mr|Mrs|Ms|Miss|Dr|Prof)\.?\s+" + re.escape(w) + r"(?![\w:])")
                    for w, ts in self.family.items() if term in ts]
        return out

    def _paired(self, mention: Mention, term: URIRef, text: str) -> Mention:
        """The mention extended over a parenthesis right after it that names the same term."""
        m = re.compile(r"\s*\(([^()]+)\)").match(text, mention.end)
        if m and self.resolve(m.group(1), text).term == term:
            return Mention(mention.start, m.end(), text[mention.start:m.end()], mention.how)
        return mention

