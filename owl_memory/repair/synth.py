"""Value synthesis: well-typed literals, defaults, conversions, bounds and strings matching a pattern."""

from __future__ import annotations

import datetime as dt
import logging
import re
from decimal import Decimal
from itertools import islice
from types import MappingProxyType

import exrex
from rdflib import BNode, Literal, URIRef
from rdflib.collection import Collection

from ..vocab import RDF, RDFS, SH, XSD, local_name, ordered
from .conformance import instances
from .context import Context
from .paths import fresh
from .verification import re_flags

NUMERIC = frozenset(XSD[t] for t in ("integer", "int", "long", "short", "byte", "decimal", "double", "float",
                                     "nonNegativeInteger", "positiveInteger", "negativeInteger", "nonPositiveInteger",
                                     "unsignedInt", "unsignedLong", "unsignedShort", "unsignedByte"))


INTEGER = NUMERIC - {XSD.decimal, XSD.double, XSD.float}


MAX_TRIES = 300  # candidates generate() draws from exrex before giving up
DEFAULT_LEXICAL = MappingProxyType({
    XSD.boolean: "false", XSD.date: "2000-01-01", XSD.dateTime: "2000-01-01T00:00:00", XSD.decimal: "0.0",
    XSD.double: "0.0E0", XSD.float: "0.0E0", XSD.positiveInteger: "1", XSD.negativeInteger: "-1", XSD.gYear: "2000",
    XSD.time: "00:00:00", XSD.anyURI: "http://example.org/", XSD.duration: "P1D", XSD.hexBinary: "00",
    XSD.gYearMonth: "2000-01", XSD.dateTimeStamp: "2000-01-01T00:00:00Z"})


def ill_typed(lexical: str, datatype) -> bool:
    """True when `lexical` is not a valid form of `datatype` (rdflib's check, its warnings silenced)."""
    log = logging.getLogger("rdflib.term")
    level, log.level = log.level, logging.CRITICAL
    try:
        return bool(Literal(lexical, datatype=datatype).ill_typed)
    finally:
        log.level = level


def typed(lexical: str, datatype) -> Literal | None:
    """A well-formed literal of `datatype`, or None."""
    if datatype == RDF.langString:
        return None
    if datatype == XSD.string:
        return Literal(lexical)
    return None if ill_typed(lexical, datatype) else Literal(lexical, datatype=datatype)


def default_literal(datatype) -> Literal:
    """A well-formed default literal of a datatype (0, false, 2000-01-01, empty string, ...)."""
    if datatype in (None, XSD.string):
        return Literal("")
    return Literal(DEFAULT_LEXICAL.get(datatype, "0" if datatype in INTEGER else ""), datatype=datatype)


def synthesize(ctx: Context, shape, focus, index: int = 0, avoid=frozenset()) -> tuple | None:
    """A value satisfying a property shape's value constraints, and triples it needs: (value, extra); a value in
    `avoid` (the focus already holds it, or it was just chosen) is passed over where another one fits, so a count of
    n gets n distinct values."""
    p = _lookup(ctx, shape)
    if ctx.param(shape, "hasValue") is not None:
        return ctx.param(shape, "hasValue"), set()
    wanted = [x for x in _siblings(ctx, shape, "hasValue") if x not in avoid]
    if wanted:  # a value another shape on the path requires
        return wanted[0], set()
    if p("in") is not None:
        fit = listed_fit(ctx, shape)
        return next((x for x in fit if x not in avoid), fit[0] if fit else Literal("")), set()
    if p("pattern") is not None and p("datatype") is None and p("nodeKind") in (SH.IRI, SH.BlankNodeOrIRI):
        name = f"{local_name(focus)}-{local_name(p('path'))}" + (f"-{index}" if index else "")
        text = generate_iri(str(p("pattern")), str(p("flags") or ""), name)
        if text is not None and URIRef(text) not in avoid:
            return URIRef(text), set()
    if ctx.keep_values and p("class") is None and p("nodeKind") not in (SH.IRI, SH.BlankNode, SH.BlankNodeOrIRI):
        named = _own_name(ctx, p, focus, avoid)
        if named is not None:  # a node minted from the user's text takes that text, not a synthetic one
            return named, set()
    if p("datatype") is not None or p("nodeKind") == SH.Literal or p("pattern") is not None:
        return _literal_for(p, {str(x) for x in avoid if isinstance(x, Literal)}), set()
    cls = p("class")
    if cls is not None:
        have = [n for n in instances(ctx.graph, cls) if n != focus and n not in avoid]
        if have:
            return have[0], set()
        node = fresh(focus, shape, index)
        return node, {(node, RDF.type, cls)}
    return (BNode(fresh(focus, shape, index)[-16:]) if p("nodeKind") == SH.BlankNode
            else fresh(focus, shape, index)), set()


def _own_name(ctx: Context, p, focus, avoid) -> Literal | None:
    """The rdfs:label the focus already has (the text a kept value was moved to when it became a node), as a value
    of a string-valued property shape (no datatype, xsd:string or rdf:langString) when it meets the shape's
    pattern and lengths; None otherwise."""
    d = p("datatype")
    if d not in (None, XSD.string, RDF.langString):
        return None
    for label in sorted(o for o in ctx.graph.objects(focus, RDFS.label) if isinstance(o, Literal)):
        value = Literal(str(label), lang=label.language or "en") if d == RDF.langString else Literal(str(label))
        if value not in avoid and _meets(p, value):
            return value
    return None


def _siblings(ctx: Context, shape, name: str) -> list:
    """The values of one parameter on the other property shapes with the same predicate path, sorted."""
    path = ctx.param(shape, "path")
    if not isinstance(path, URIRef):
        return []
    return sorted({x for ps in ctx.shapes.subjects(SH.path, path) if ps != shape for x in ctx.params(ps, name)})


def listed_fit(ctx: Context, shape, like=None) -> list:
    """Members of a shape's sh:in list: those that also meet its datatype, pattern and length parameters first,
    and among them those with the same text as `like` (case aside) first."""
    p = _lookup(ctx, shape)
    members = list(Collection(ctx.shapes, p("in"))) if p("in") is not None else []
    return sorted(members, key=lambda x: (not _meets(p, x), str(x).lower() != str(like).lower()))


def _meets(p, x) -> bool:
    """True when a term meets the datatype, pattern (Python's re) and length parameters `p` reads."""
    d, pattern, lo, hi = p("datatype"), p("pattern"), p("minLength"), p("maxLength")
    kind = (x.datatype or (RDF.langString if x.language else XSD.string)) if isinstance(x, Literal) else None
    return (d is None or kind == d) \
        and (pattern is None or re.search(str(pattern), str(x), re_flags(p("flags"))) is not None) \
        and (lo is None or len(str(x)) >= int(lo)) and (hi is None or len(str(x)) <= int(hi))


def _lookup(ctx: Context, shape):
    """A parameter reader for `shape` that falls back to other property shapes on the same predicate."""
    path = ctx.param(shape, "path")
    others = ordered(ps for ps in ctx.shapes.subjects(SH.path, path) if ps != shape) if isinstance(path, URIRef) else []

    def look(name):
        """The parameter's value on the shape, else on the first sibling that has it."""
        for s in [shape, *others]:
            x = ctx.param(s, name)
            if x is not None:
                return x
        return None

    return look


def _literal_for(p, avoid=frozenset()) -> Literal:
    """A literal meeting the datatype, length, pattern and range parameters `p` reads, where derivable, its text not
    in `avoid` where another one fits."""
    d, pattern, lo, hi = p("datatype"), p("pattern"), p("minLength"), p("maxLength")
    lit: Literal | None = default_literal(d)
    if pattern is not None:
        def fits(text: str) -> bool:
            """Well-typed, within the length bounds and not a text to avoid."""
            return (d is None or typed(text, d) is not None) and (lo is None or len(text) >= int(lo)) \
                and (hi is None or len(text) <= int(hi)) and text not in avoid

        flags = str(p("flags") or "")
        text = generate(str(pattern), flags, accept=fits) or generate(str(pattern), flags)
        lit = typed(text, d) if d is not None and text is not None else Literal(text) if text is not None else lit
    if p("minInclusive") is not None or p("minExclusive") is not None:
        lit = clamp(lit, p("minInclusive"), p("minExclusive"), None, None) or lit
        lit = (typed(str(lit), d) or lit) if d is not None and lit is not None else lit  # in the shape's datatype
    if lo is not None and lit is not None and len(str(lit)) < int(lo):
        lit = Literal(str(lit) + "x" * (int(lo) - len(str(lit))), datatype=lit.datatype, lang=lit.language)
    if lit is not None and pattern is None and str(lit) in avoid:
        lit = _other(lit, avoid) or lit
    return lit if lit is not None else Literal("")


def _other(lit: Literal, avoid) -> Literal | None:
    """A literal of the same kind as `lit` whose text is not in `avoid`: a number counted up, a string suffixed."""
    for k in range(1, len(avoid) + 2):
        text = str(lit.toPython() + k) if lit.datatype in NUMERIC and not ill_typed(str(lit), lit.datatype) \
            else f"{lit}{k}"
        got = same_kind(lit, text)
        if got is not None and str(got) not in avoid:
            return got
    return None


def generate(pattern: str, flags: str = "", accept=None, marked: bool = False) -> str | None:
    """A short string matching a regular expression (exrex enumerates matches, shortest repeats first), tidy
    printable ones preferred (spaces for \\s, letters and dots for "." first); `accept` may reject a candidate (e.g.
    an ill-typed date). With `marked`, a match that says it is synthetic (a run of letters made "synthetic") is
    preferred where the pattern allows one. None when none is found."""
    fl = re_flags(flags)

    def fits(x: str) -> bool:
        """Matches the pattern (as pySHACL matches it) and passes `accept`."""
        return bool(re.search(pattern, x, fl)) and (accept is None or accept(x))

    found: list = []
    for source in dict.fromkeys([_plain(pattern), pattern]):
        try:
            found = [x for x in islice(exrex.generate(("(?i)" if fl & re.IGNORECASE else "") + source, limit=4),
                                       MAX_TRIES) if fits(x)]
        except (re.error, RecursionError):  # syntax Python's re lacks (\p{L}); repeat counts too deep to enumerate
            continue
        if found:
            break
    tidy = [x for x in found if x.isprintable() and x == x.strip()] or found
    marks = (y for x in tidy[:MARK_TRIES] for y in _with_marker(x)) if marked else ()
    return next((y for y in marks if fits(y)), (tidy or [None])[0])


MARK_TRIES = 20  # generated matches a marked variant is looked for in
MARKERS = ("synthetic", "example", "invalid")  # words a synthetic text is made of, where the pattern allows them


def _with_marker(text: str) -> list[str]:
    """`text` with its runs of letters replaced by marker words (all runs: "synthetic", "example", "invalid", ...;
    then each run alone by "synthetic"), the case of each run kept."""
    runs = list(re.finditer(r"[A-Za-z]+", text))

    def swap(words) -> str:
        """`text` with run i replaced by words[i] (None: kept)."""
        out, at = [], 0
        for m, w in zip(runs, words, strict=True):
            w = w if w is None or not (m.group().isupper() and len(m.group()) > 1) else w.upper()
            out += [text[at:m.start()], m.group() if w is None else w]
            at = m.end()
        return "".join(out) + text[at:]

    every = [MARKERS[min(i, len(MARKERS) - 1)] for i in range(len(runs))]
    return ([swap(every)] if len(runs) > 1 else []) + [swap([None] * i + [MARKERS[0]] + [None] * (len(runs) - i - 1))
                                                       for i in range(len(runs))]


def _plain(pattern: str) -> str:
    """`pattern` with \\s as a space, \\S as a letter, an unescaped "." as a dot, letter or digit and a negated
    class that excludes no letter or digit (such as [^@ ]) as a letter or digit: every match of it matches
    `pattern`, and reads better."""
    out, i, depth = [], 0, 0
    while i < len(pattern):
        c = pattern[i]
        negated = re.match(r"\[\^([^\]\\]*)\]", pattern[i:]) if depth == 0 else None
        if negated and not re.search(r"[A-Za-z0-9]", negated.group(1)):
            out.append("[a-z0-9]")
            i += negated.end()
            continue
        if c == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            out.append({"s": "[ ]", "S": "[a-z]"}.get(nxt, c + nxt) if depth == 0 else c + nxt)
            i += 2
            continue
        depth += 1 if c == "[" and depth == 0 else -1 if c == "]" and depth else 0
        out.append("[.a-z0-9]" if c == "." and depth == 0 else c)
        i += 1
    return "".join(out)


def generate_iri(pattern: str, flags: str, name: str) -> str | None:
    """An IRI matching a pattern: its shortest match, completed with `name` (and a host after a bare scheme)
    when the pattern leaves the end open, so ^https?:// gives http://example.org/<name>, not http://."""
    text = generate(pattern, flags)
    if text is None:
        return None
    longer = text + ("example.org/" if text.endswith("://") else "") + name
    return longer if re.search(pattern, longer, re_flags(flags)) else text


def convert(val, d) -> Literal | None:
    """A best-effort conversion of a value to datatype `d`."""
    text = str(val)
    if d in INTEGER and re.fullmatch(r"[+-]?\d+(\.\d*)?([eE][+-]?\d+)?", text):
        return typed(str(int(Decimal(text))), d)
    if d == XSD.date and re.match(r"\d{4}-\d\d-\d\d", text):
        return typed(text[:10], d)
    if d == XSD.dateTime and re.fullmatch(r"\d{4}-\d\d-\d\d", text):
        return typed(text + "T00:00:00", d)
    return typed(text, d)


def same_kind(val: Literal, text: str) -> Literal | None:
    """`text` with the language or datatype of `val`, None when that would be ill-formed."""
    if val.language:
        return Literal(text, lang=val.language)
    return typed(text, val.datatype) if val.datatype else Literal(text)


def clamp(val, min_inc, min_exc, max_inc, max_exc) -> Literal | None:
    """The closest literal to `val` within the bounds, typed like the bound."""
    for bound, sign, inclusive in ((min_inc, 1, True), (min_exc, 1, False), (max_inc, -1, True),
                                   (max_exc, -1, False)):
        if bound is None or not isinstance(bound, Literal):
            continue
        if _within(val, bound, sign, inclusive):
            continue
        return bound if inclusive else nudge(bound, sign)
    return None


def _within(val, bound: Literal, sign: int, inclusive: bool) -> bool:
    """True when `val` already satisfies one bound."""
    try:
        a, b = val.toPython(), bound.toPython()
        d = (a > b) - (a < b)
    except (AttributeError, TypeError):
        return False
    return sign * d > 0 or (inclusive and d == 0)


def nudge(bound: Literal, sign: int) -> Literal | None:
    """The bound moved one unit (integer, day or second, or 1 for decimals) inward."""
    b = bound.toPython()
    if isinstance(b, bool):
        return None
    if isinstance(b, int | float | Decimal):
        return Literal(b + sign, datatype=bound.datatype)
    if isinstance(b, dt.datetime):
        return Literal((b + sign * dt.timedelta(seconds=1)).isoformat(), datatype=bound.datatype)
    if isinstance(b, dt.date):
        return Literal((b + sign * dt.timedelta(days=1)).isoformat(), datatype=bound.datatype)
    return None
