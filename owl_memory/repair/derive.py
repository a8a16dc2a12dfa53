"""Values derived from an offending literal: its own text trimmed, its spaces collapsed or removed, re-cased, kept in
its kind or re-typed; and whether a literal meets a shape's value constraints. A derived value carries the offending
value's content, so a repair that keeps a value invents nothing (repair.changes reports how each was derived)."""

from __future__ import annotations

import re

from rdflib import Literal
from rdflib.collection import Collection

from ..vocab import RDF, SH, XSD
from .synth import ill_typed, same_kind, typed
from .verification import re_flags

SPACES = (("trimmed", str.strip), ("spaces collapsed", lambda t: " ".join(t.split())),
          ("spaces removed", lambda t: "".join(t.split())))
CASES = (("upper-cased", str.upper), ("lower-cased", str.lower), ("capitalized", str.capitalize))


def derivations(value: Literal, datatype=None) -> list[tuple[str, Literal]]:
    """(how, literal) for each text of `value` a space rule, a case rule or both make (one rule first), in its own
    kind and re-typed to `datatype` when one is given; the value itself left out, each literal once."""
    text, out, seen = str(value), [], {value}
    rules = [(n, f) for n, f in SPACES] + [(n, f) for n, f in CASES]
    rules += [(f"{a}, {b}", lambda t, f=f, g=g: g(f(t))) for a, f in SPACES for b, g in CASES]
    for how, rule in rules:
        new = rule(text)
        if new == text:
            continue  # re-typing the same text is datatype.cast's
        for lit, typed_how in ((same_kind(value, new), how), (_typed(new, datatype), f"{how}, re-typed")):
            if lit is not None and lit not in seen:
                seen.add(lit)
                out.append((typed_how, lit))
    return out


def _typed(text: str, datatype) -> Literal | None:
    """`text` as a well-formed literal of `datatype` (None: no datatype, or ill-formed)."""
    return typed(text, datatype) if datatype is not None else None


def meets(shapes, shape, value) -> bool:
    """True when a literal meets the value constraints of `shape` that judge a term alone: sh:datatype, sh:pattern
    (with sh:flags, as pySHACL reads them), sh:in, sh:minLength / sh:maxLength, sh:languageIn, sh:nodeKind."""
    if not isinstance(value, Literal):
        return False
    p = lambda name: shapes.value(shape, SH[name])  # noqa: E731
    kind = value.datatype or (RDF.langString if value.language else XSD.string)
    checks = [p("datatype") is None or (kind == p("datatype") and not ill_typed(str(value), kind)),
              all(re.search(str(x), str(value), re_flags(p("flags"))) for x in shapes.objects(shape, SH.pattern)),
              p("in") is None or value in _listed(shapes, p("in")),
              p("minLength") is None or len(str(value)) >= int(p("minLength")),
              p("maxLength") is None or len(str(value)) <= int(p("maxLength")),
              p("languageIn") is None or bool(value.language and _lang_matches(value.language,
                                                                                  _listed(shapes, p("languageIn")))),
              p("nodeKind") in (None, SH.Literal, SH.IRIOrLiteral, SH.BlankNodeOrLiteral)]
    return all(checks)


def _listed(shapes, head) -> list:
    """Members of an RDF list in the shapes graph."""
    return list(Collection(shapes, head))


def _lang_matches(tag: str, ranges: list) -> bool:
    """SPARQL langMatches for basic ranges: the tag is a range or starts with one and a hyphen ("*": any tag)."""
    tag = tag.lower()
    return any(str(r) == "*" or tag == str(r).lower() or tag.startswith(str(r).lower() + "-") for r in ranges)
