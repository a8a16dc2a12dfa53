"""Deterministic repair operators: one parameterized patch template per SHACL Core constraint component.

Each strategy takes a Context (data graph, shapes graph) and one violation dict (from verify.violations_of)
and returns candidate Patches, best first; values come from the shapes and the graph, never from a model.
STRATEGIES maps a strategy id to its component, its declarative parameter bindings and its function;
REGISTRY maps a constraint component IRI to its strategy ids in default order.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from dataclasses import dataclass, field
from decimal import Decimal

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.collection import Collection

from .store.blobs import sha256
from .vocab import RDF, RDFS, SH, XSD, local_name

NEW = "urn:owl-memory:new:"
NUMERIC = {XSD[t] for t in ("integer", "int", "long", "short", "byte", "decimal", "double", "float",
                            "nonNegativeInteger", "positiveInteger", "negativeInteger", "nonPositiveInteger",
                            "unsignedInt", "unsignedLong", "unsignedShort", "unsignedByte")}
INTEGER = NUMERIC - {XSD.decimal, XSD.double, XSD.float}
DEFAULT_LEXICAL = {XSD.boolean: "false", XSD.date: "2000-01-01", XSD.dateTime: "2000-01-01T00:00:00",
                   XSD.decimal: "0.0", XSD.double: "0.0E0", XSD.float: "0.0E0", XSD.positiveInteger: "1",
                   XSD.negativeInteger: "-1", XSD.gYear: "2000", XSD.time: "00:00:00",
                   XSD.anyURI: "http://example.org/"}
MAX_DEPTH = 3


@dataclass(frozen=True)
class Patch:
    """A candidate change: triples to add and remove, the strategy that made it and the nodes it repairs.

    Args:
        operator: strategy id, e.g. "class.add_type".
        added: triples to add.
        removed: triples to remove.
        touches: focus nodes (top-level or nested) this patch repairs; removals must touch one of them.
        choice: a small JSON value naming which candidate of the strategy this is (e.g. an sh:or branch).
    """

    operator: str
    added: frozenset = frozenset()
    removed: frozenset = frozenset()
    touches: frozenset = frozenset()
    choice: object = None

    @property
    def size(self) -> int:
        """Number of triples changed."""
        return len(self.added) + len(self.removed)


@dataclass
class Context:
    """What an operator may read: the working data graph, the shapes graph and a nested-check function.

    Args:
        graph: the data graph being repaired (not modified by operators).
        shapes: the shapes graph (never modified).
        depth: nesting depth of sh:node / logical descents.
        checks: counter of nested conformance checks run.
        hint: a compiled operator's recorded choice (e.g. an sh:or branch and its plan): replayed with no trial checks.
    """

    graph: Graph
    shapes: Graph
    depth: int = 0
    checks: list = field(default_factory=lambda: [0])
    hint: object = None

    def nested(self, node, shape, graph: Graph | None = None) -> list[dict]:
        """Violations of `node` against `shape` alone (pySHACL with a temporary target)."""
        from .verify import nested_violations

        self.checks[0] += 1
        return nested_violations(self.graph if graph is None else graph, self.shapes, node, shape)

    def param(self, shape, name):
        """One value of a shape parameter (sh:<name>), or None."""
        return self.shapes.value(shape, SH[name])

    def params(self, shape, name) -> list:
        """All values of a shape parameter, sorted."""
        return sorted(self.shapes.objects(shape, SH[name]))

    def listed(self, shape, name) -> list:
        """Members of an RDF list parameter (sh:in, sh:or, ...), in list order."""
        head = self.param(shape, name)
        return list(Collection(self.shapes, head)) if head is not None else []

    def deeper(self, graph: Graph | None = None) -> Context:
        """A context one descent deeper, optionally over another graph."""
        return Context(self.graph if graph is None else graph, self.shapes, self.depth + 1, self.checks)


# ---------- paths and values ----------

def steps(shapes: Graph, path) -> list | None:
    """A path as (direction, predicate) steps ("fwd", "inv", "opt" for zero-or-more parts), or None."""
    if isinstance(path, URIRef):
        return [("fwd", path)]
    if path is None:
        return None
    if shapes.value(path, RDF.first) is not None:
        out = [steps(shapes, p) for p in Collection(shapes, path)]
        return None if any(s is None for s in out) else [x for s in out for x in s]
    inverse = shapes.value(path, SH.inversePath)
    if isinstance(inverse, URIRef):
        return [("inv", inverse)]
    for kind, mark in ((SH.zeroOrMorePath, "opt"), (SH.zeroOrOnePath, "maybe")):
        inner = shapes.value(path, kind)
        if inner is not None and steps(shapes, inner) is not None:
            return [(mark, tuple(steps(shapes, inner)))]
    return None


def path_of(ctx: Context, v: dict):
    """The path node of a violation: from the report, else sh:path of its source shape."""
    return ctx.param(v["shape"], "path") if v["shape"] is not None else None


def values(ctx: Context, focus, path) -> list:
    """Value nodes of `focus` along a path of simple steps (sorted); the focus itself when there is no path."""
    st = steps(ctx.shapes, path) if path is not None else []
    if st is None:
        return []
    nodes = {focus}
    for kind, p in st:
        nodes = _step(ctx.graph, nodes, kind, p)
    return sorted(nodes)


def _step(g: Graph, nodes: set, kind: str, p) -> set:
    """Nodes one step away (zero-or-more steps for "opt")."""
    if kind == "fwd":
        return {o for n in nodes for o in g.objects(n, p)}
    if kind == "inv":
        return {s for n in nodes for s in g.subjects(p, n)}
    if kind == "maybe":
        nxt = set(nodes)
        for k, q in p:
            nxt = _step(g, nxt, k, q)
        return set(nodes) | nxt
    out, frontier = set(nodes), set(nodes)
    while frontier:
        nxt = frontier
        for k, q in p:
            nxt = _step(g, nxt, k, q)
        frontier = nxt - out
        out |= nxt
    return out


def value_triple(ctx: Context, focus, path, value):
    """The triple linking focus to value along a one-step path, or None for longer paths."""
    st = steps(ctx.shapes, path) if path is not None else None
    if not st or len(st) != 1 or st[0][0] not in ("fwd", "inv"):
        return None
    kind, p = st[0]
    t = (focus, p, value) if kind == "fwd" else (value, p, focus)
    return t if t in ctx.graph else None


def link_triples(ctx: Context, focus, path, value) -> set | None:
    """Triples that make `value` a value of `focus` along `path`, reusing existing intermediate nodes."""
    st = steps(ctx.shapes, path)
    if not st:
        return None
    st = [x for s in st if s[0] != "opt" for x in (s[1] if s[0] == "maybe" else [s])]
    if not st or any(k not in ("fwd", "inv") for k, _ in st):
        return None
    out, node = set(), focus
    for i, (kind, p) in enumerate(st):
        last = i == len(st) - 1
        have = sorted(_step(ctx.graph, {node}, kind, p))
        nxt = value if last else (have[0] if have else fresh(node, p, i))
        out.add((node, p, nxt) if kind == "fwd" else (nxt, p, node))
        node = nxt
    return {t for t in out if t not in ctx.graph}


def fresh(*parts) -> URIRef:
    """A deterministic new IRI for a node the repair has to create."""
    return URIRef(NEW + sha256("|".join(str(p) for p in parts))[:16])


def instances(g: Graph, cls) -> list:
    """Nodes typed `cls` or one of its rdfs:subClassOf descendants, sorted."""
    classes = set(g.transitive_subjects(RDFS.subClassOf, cls))
    return sorted({s for c in classes for s in g.subjects(RDF.type, c)})


def is_instance(g: Graph, node, cls) -> bool:
    """True when `node` has a type that is `cls` or a subclass of it."""
    return any(cls in set(g.transitive_objects(t, RDFS.subClassOf)) for t in g.objects(node, RDF.type))


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


def _replace(name: str, ctx: Context, v: dict, new, choice=None) -> list[Patch]:
    """A patch swapping the violation's value for `new` along its one-step path."""
    t = value_triple(ctx, v["focus"], path_of(ctx, v), v["value"])
    if t is None or new is None or new == v["value"]:
        return []
    n = (t[0], t[1], new) if t[0] == v["focus"] else (new, t[1], t[2])
    return [Patch(name, frozenset({n}), frozenset({t}), frozenset({v["focus"]}), choice)]


def _drop(name: str, ctx: Context, v: dict, value, choice=None) -> list[Patch]:
    """A patch removing one value of the focus along its one-step path."""
    t = value_triple(ctx, v["focus"], path_of(ctx, v), value)
    return [] if t is None else [Patch(name, frozenset(), frozenset({t}), frozenset({v["focus"]}), choice)]


# ---------- value synthesis ----------

def default_literal(datatype) -> Literal:
    """A well-formed default literal of a datatype (0, false, 2000-01-01, empty string, ...)."""
    if datatype in (None, XSD.string):
        return Literal("")
    return Literal(DEFAULT_LEXICAL.get(datatype, "0" if datatype in INTEGER else ""), datatype=datatype)


def synthesize(ctx: Context, shape, focus, index: int = 0) -> tuple | None:
    """A value satisfying a property shape's value constraints, and triples it needs: (value, extra)."""
    p = _lookup(ctx, shape)
    if p("hasValue") is not None:
        return p("hasValue"), set()
    if p("in") is not None:
        return list(Collection(ctx.shapes, p("in")))[0], set()
    if p("pattern") is not None and p("datatype") is None and p("nodeKind") in (SH.IRI, SH.BlankNodeOrIRI):
        name = f"{local_name(focus)}-{local_name(p('path'))}"
        text = generate_iri(str(p("pattern")), str(p("flags") or ""), name)
        if text is not None:
            return URIRef(text), set()
    if p("datatype") is not None or p("nodeKind") == SH.Literal or p("pattern") is not None:
        return _literal_for(p), set()
    cls = p("class")
    if cls is not None:
        have = [n for n in instances(ctx.graph, cls) if n != focus]
        if have:
            return have[0], set()
        node = fresh(focus, shape, index)
        return node, {(node, RDF.type, cls)}
    return (BNode(fresh(focus, shape, index)[-16:]) if p("nodeKind") == SH.BlankNode
            else fresh(focus, shape, index)), set()


_VALUE_PARAMS = ("hasValue", "in", "datatype", "nodeKind", "class", "pattern", "flags", "minLength", "minInclusive",
                 "minExclusive", "maxInclusive", "maxExclusive", "languageIn")


def _lookup(ctx: Context, shape):
    """A parameter reader for `shape` that falls back to other property shapes on the same predicate."""
    path = ctx.param(shape, "path")
    others = sorted(ps for ps in ctx.shapes.subjects(SH.path, path) if ps != shape) if isinstance(path, URIRef) else []

    def look(name):
        """The parameter's value on the shape, else on the first sibling that has it."""
        for s in [shape, *others]:
            x = ctx.param(s, name)
            if x is not None:
                return x
        return None

    return look


def _literal_for(p) -> Literal:
    """A literal meeting the datatype, length, pattern and range parameters `p` reads, where derivable."""
    d, pattern = p("datatype"), p("pattern")
    lit = default_literal(d)
    if pattern is not None:
        text = generate(str(pattern), str(p("flags") or ""))
        lit = typed(text, d) if d is not None and text is not None else Literal(text) if text is not None else lit
    if p("minInclusive") is not None or p("minExclusive") is not None:
        lit = _clamp(lit, p("minInclusive"), p("minExclusive"), None, None) or lit
    n = p("minLength")
    if n is not None and lit is not None and len(str(lit)) < int(n):
        lit = Literal(str(lit) + "x" * (int(n) - len(str(lit))), datatype=lit.datatype, lang=lit.language)
    return lit if lit is not None else Literal("")


def generate(pattern: str, flags: str = "") -> str | None:
    """A short string matching a regular expression, derived from its parse tree; None when not derivable."""
    try:
        import re._parser as sre_parse  # Python >= 3.11
    except ImportError:  # pragma: no cover
        import sre_parse  # type: ignore[no-redef]
    try:
        text = _gen(sre_parse.parse(pattern), sre_parse)
    except (re.error, ValueError, KeyError, TypeError):
        return None
    fl = re.IGNORECASE if "i" in flags else 0
    return text if text is not None and re.search(pattern, text, fl) else None


def generate_iri(pattern: str, flags: str, name: str) -> str | None:
    """An IRI matching a pattern: its shortest match, completed with `name` (and a host after a bare scheme)
    when the pattern leaves the end open, so ^https?:// gives http://example.org/<name>, not http://."""
    text = generate(pattern, flags)
    if text is None:
        return None
    longer = text + ("example.org/" if text.endswith("://") else "") + name
    return longer if re.search(pattern, longer, re.IGNORECASE if "i" in flags else 0) else text


def _gen(tree, sp) -> str | None:
    """Minimal text for a parsed regex subtree."""
    out = []
    for op, arg in tree:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(arg))
        elif name == "ANY":
            out.append("a")
        elif name == "IN":
            out.append(_gen_in(arg))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo, _, sub = arg
            out.append((_gen(sub, sp) or "") * max(lo, 0))
        elif name == "SUBPATTERN":
            out.append(_gen(arg[-1], sp) or "")
        elif name == "BRANCH":
            out.append(_gen(arg[1][0], sp) or "")
        elif name in ("AT", "ASSERT", "ASSERT_NOT"):
            continue
        else:
            return None
    return "".join(out)


def _gen_in(items) -> str:
    """One character a character class accepts."""
    negate = any(str(op) == "NEGATE" for op, _ in items)
    for op, arg in items:
        name = str(op)
        if negate:
            bad = {chr(a) for o, a in items if str(o) == "LITERAL"}
            return next(c for c in "aA0_-x" if c not in bad)
        if name == "LITERAL":
            return chr(arg)
        if name == "RANGE":
            return chr(arg[0])
        if name == "CATEGORY":
            return {"CATEGORY_DIGIT": "0", "CATEGORY_SPACE": " "}.get(str(arg), "a")
    return "a"


# ---------- strategies, one block per constraint component ----------

def class_add_type(ctx: Context, v: dict) -> list[Patch]:
    """sh:class: type the value node with each required class it lacks."""
    node = v["value"]
    if node is None or isinstance(node, Literal):
        return []
    add = {(node, RDF.type, c) for c in ctx.params(v["shape"], "class") if not is_instance(ctx.graph, node, c)}
    return [Patch("class.add_type", frozenset(add), frozenset(), frozenset({v["focus"]}))] if add else []


def class_link_instance(ctx: Context, v: dict) -> list[Patch]:
    """sh:class: replace the value by an existing instance of the class."""
    cls = ctx.param(v["shape"], "class")
    have = [n for n in instances(ctx.graph, cls) if n != v["focus"]] if cls is not None else []
    return _replace("class.link_instance", ctx, v, have[0]) if have else []


def datatype_cast(ctx: Context, v: dict) -> list[Patch]:
    """sh:datatype: keep the lexical form, give it the required datatype (when well-formed)."""
    d, val = ctx.param(v["shape"], "datatype"), v["value"]
    if not isinstance(val, Literal):
        return []
    if d == RDF.langString:
        return _replace("datatype.cast", ctx, v, Literal(str(val), lang="en"))
    return _replace("datatype.cast", ctx, v, typed(str(val), d))


def datatype_convert(ctx: Context, v: dict) -> list[Patch]:
    """sh:datatype: convert the value (number to number, date to dateTime, ...) or use the type's default."""
    d, val = ctx.param(v["shape"], "datatype"), v["value"]
    if d is None or d == RDF.langString:
        return []
    return _replace("datatype.convert", ctx, v, _convert(val, d) or default_literal(d))


def _convert(val, d) -> Literal | None:
    """A best-effort conversion of a value to datatype `d`."""
    text = str(val)
    if d in INTEGER and re.fullmatch(r"[+-]?\d+(\.\d*)?([eE][+-]?\d+)?", text):
        return typed(str(int(Decimal(text))), d)
    if d == XSD.date and re.match(r"\d{4}-\d\d-\d\d", text):
        return typed(text[:10], d)
    if d == XSD.dateTime and re.fullmatch(r"\d{4}-\d\d-\d\d", text):
        return typed(text + "T00:00:00", d)
    return typed(text, d)


def nodekind_convert(ctx: Context, v: dict) -> list[Patch]:
    """sh:nodeKind: turn the value into the required kind (IRI text <-> IRI, blank node -> new IRI)."""
    kind, val = ctx.param(v["shape"], "nodeKind"), v["value"]
    if kind in (SH.Literal,) and not isinstance(val, Literal):
        return _replace("nodeKind.convert", ctx, v, Literal(str(val)))
    if kind in (SH.IRI, SH.BlankNodeOrIRI, SH.IRIOrLiteral) and isinstance(val, Literal):
        text = str(val)
        return _replace("nodeKind.convert", ctx, v, URIRef(text) if re.match(r"^[a-z][a-z0-9+.-]*:\S+$", text)
                        else fresh(v["focus"], text))
    if kind in (SH.IRI, SH.IRIOrLiteral) and isinstance(val, BNode):
        node = fresh(v["focus"], val)
        patches = _replace("nodeKind.convert", ctx, v, node)
        copy = frozenset((node, p, o) for p, o in ctx.graph.predicate_objects(val))
        return [Patch(p.operator, p.added | copy, p.removed, p.touches) for p in patches]
    if kind in (SH.BlankNode, SH.BlankNodeOrLiteral) and isinstance(val, URIRef):
        return _replace("nodeKind.convert", ctx, v, BNode(sha256(str(val))[:16]))
    return []


def mincount_add(ctx: Context, v: dict) -> list[Patch]:
    """sh:minCount: add the missing values along the path, chosen from the shape (hasValue, in, class, datatype)."""
    path, n = path_of(ctx, v), int(ctx.param(v["shape"], "minCount"))
    have = values(ctx, v["focus"], path)
    added: set = set()
    for i in range(max(0, n - len(have))):
        got = synthesize(ctx, v["shape"], v["focus"], i)
        links = link_triples(ctx, v["focus"], path, got[0]) if got else None
        if links is None:
            return []
        added |= links | got[1]
    return [Patch("minCount.add_values", frozenset(added), frozenset(), frozenset({v["focus"]}))] if added else []


def maxcount_drop(ctx: Context, v: dict) -> list[Patch]:
    """sh:maxCount: drop surplus values, keeping the best-typed ones (those meeting the shape's other constraints)."""
    path, n = path_of(ctx, v), int(ctx.param(v["shape"], "maxCount"))
    ranked = sorted(values(ctx, v["focus"], path), key=lambda x: (-_fit(ctx, v["shape"], x), x.n3()))
    drop = [value_triple(ctx, v["focus"], path, x) for x in ranked[n:]]
    if not drop or None in drop:
        return []
    return [Patch("maxCount.drop_surplus", frozenset(), frozenset(drop), frozenset({v["focus"]}))]


def _fit(ctx: Context, shape, x) -> int:
    """How many of a shape's datatype / class / in parameters a value meets."""
    d, cls, listed = ctx.param(shape, "datatype"), ctx.param(shape, "class"), ctx.listed(shape, "in")
    return sum([d is not None and isinstance(x, Literal) and x.datatype == d and not x.ill_typed,
                cls is not None and is_instance(ctx.graph, x, cls), bool(listed) and x in listed])


def minlength_pad(ctx: Context, v: dict) -> list[Patch]:
    """sh:minLength: pad a literal value up to the minimum length."""
    n, val = int(ctx.param(v["shape"], "minLength")), v["value"]
    if not isinstance(val, Literal):
        return []
    text = str(val) + "x" * (n - len(str(val)))
    return _replace("minLength.pad", ctx, v, _same_kind(val, text))


def maxlength_truncate(ctx: Context, v: dict) -> list[Patch]:
    """sh:maxLength: truncate a literal value to the maximum length (when still well-formed)."""
    n, val = int(ctx.param(v["shape"], "maxLength")), v["value"]
    return _replace("maxLength.truncate", ctx, v, _same_kind(val, str(val)[:n])) if isinstance(val, Literal) else []


def _same_kind(val: Literal, text: str) -> Literal | None:
    """`text` with the language or datatype of `val`, None when that would be ill-formed."""
    if val.language:
        return Literal(text, lang=val.language)
    return typed(text, val.datatype) if val.datatype else Literal(text)


def pattern_generate(ctx: Context, v: dict) -> list[Patch]:
    """sh:pattern: replace the value by a string derived from the regular expression (or an existing match)."""
    pat, flags = str(ctx.param(v["shape"], "pattern")), str(ctx.param(v["shape"], "flags") or "")
    fl = re.IGNORECASE if "i" in flags else 0
    path = path_of(ctx, v)
    p = path if isinstance(path, URIRef) else None
    seen = sorted({o for o in ctx.graph.objects(None, p) if isinstance(o, Literal) and re.search(pat, str(o), fl)})
    text = str(seen[0]) if seen else generate(pat, flags)
    if text is None:
        return []
    val = v["value"]
    new = _same_kind(val, text) if isinstance(val, Literal) else Literal(text)
    return _replace("pattern.generate", ctx, v, new)


def in_pick(ctx: Context, v: dict) -> list[Patch]:
    """sh:in: replace the value by a listed one (same text first, else the first listed)."""
    listed = ctx.listed(v["shape"], "in")
    same = [x for x in listed if str(x).lower() == str(v["value"]).lower()]
    return _replace("in.pick_listed", ctx, v, (same or listed or [None])[0])


def hasvalue_add(ctx: Context, v: dict) -> list[Patch]:
    """sh:hasValue: add the required value along the path."""
    want, path = ctx.param(v["shape"], "hasValue"), path_of(ctx, v)
    links = link_triples(ctx, v["focus"], path, want) if path is not None else None
    return [Patch("hasValue.add_value", frozenset(links), frozenset(), frozenset({v["focus"]}))] if links else []


def range_clamp(ctx: Context, v: dict) -> list[Patch]:
    """sh:min/maxInclusive/Exclusive: move the value to the nearest allowed one."""
    s = v["shape"]
    new = _clamp(v["value"], *(ctx.param(s, k) for k in ("minInclusive", "minExclusive", "maxInclusive",
                                                          "maxExclusive")))
    return _replace("range.clamp", ctx, v, new)


def _clamp(val, min_inc, min_exc, max_inc, max_exc) -> Literal | None:
    """The closest literal to `val` within the bounds, typed like the bound."""
    for bound, sign, inclusive in ((min_inc, 1, True), (min_exc, 1, False), (max_inc, -1, True),
                                   (max_exc, -1, False)):
        if bound is None or not isinstance(bound, Literal):
            continue
        if _within(val, bound, sign, inclusive):
            continue
        return bound if inclusive else _nudge(bound, sign)
    return None


def _within(val, bound: Literal, sign: int, inclusive: bool) -> bool:
    """True when `val` already satisfies one bound."""
    try:
        a, b = val.toPython(), bound.toPython()
        d = (a > b) - (a < b)
    except (AttributeError, TypeError):
        return False
    return sign * d > 0 or (inclusive and d == 0)


def _nudge(bound: Literal, sign: int) -> Literal | None:
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


def languagein_retag(ctx: Context, v: dict) -> list[Patch]:
    """sh:languageIn: give the text the first allowed language tag."""
    langs = ctx.listed(v["shape"], "languageIn")
    val = v["value"]
    if not langs:
        return []
    text = str(val) if isinstance(val, Literal) else re.split(r"[#/:]", str(val))[-1]
    return _replace("languageIn.retag", ctx, v, Literal(text, lang=str(langs[0])))


def uniquelang_drop(ctx: Context, v: dict) -> list[Patch]:
    """sh:uniqueLang: drop surplus values that repeat a language tag (the first by order stays)."""
    path, seen, drop = path_of(ctx, v), set(), []
    for x in values(ctx, v["focus"], path):
        lang = x.language if isinstance(x, Literal) else None
        if lang and lang.lower() in seen:
            drop.append(value_triple(ctx, v["focus"], path, x))
        seen.add(lang.lower() if lang else None)
    if not drop or None in drop:
        return []
    return [Patch("uniqueLang.drop_duplicates", frozenset(), frozenset(drop), frozenset({v["focus"]}))]


def equals_add(ctx: Context, v: dict) -> list[Patch]:
    """sh:equals: add the values one side lacks (node level: the focus itself; other values are dropped)."""
    f, q, path = v["focus"], ctx.param(v["shape"], "equals"), path_of(ctx, v)
    mine = set(values(ctx, f, path)) if path is not None else {f}
    other = set(ctx.graph.objects(f, q))
    add = {(f, q, x) for x in mine - other}
    if path is None:
        return [Patch("equals.align", frozenset(add), frozenset((f, q, x) for x in other - mine), frozenset({f}))]
    links = [link_triples(ctx, f, path, x) for x in other - mine]
    if None in links:
        return []
    add |= {t for s in links for t in s}
    return [Patch("equals.align", frozenset(add), frozenset(), frozenset({f}))] if add else []


def disjoint_drop(ctx: Context, v: dict) -> list[Patch]:
    """sh:disjoint: drop the shared value from the constrained path (or, second, from the other property)."""
    f, q = v["focus"], ctx.param(v["shape"], "disjoint")
    out = _drop("disjoint.drop_shared", ctx, v, v["value"]) if path_of(ctx, v) is not None else []
    if (f, q, v["value"]) in ctx.graph:
        out.append(Patch("disjoint.drop_shared", frozenset(), frozenset({(f, q, v["value"])}), frozenset({f}), "other"))
    return out


def lessthan_adjust(ctx: Context, v: dict) -> list[Patch]:
    """sh:lessThan(OrEquals): lower the value below the other property's smallest value, else drop it."""
    comp = "lessThan" if ctx.param(v["shape"], "lessThan") is not None else "lessThanOrEquals"
    q = ctx.param(v["shape"], comp)
    others = [o for o in ctx.graph.objects(v["focus"], q) if isinstance(o, Literal)]
    out = []
    try:
        low = min(others, key=lambda o: o.toPython()) if others else None
    except TypeError:
        low = None
    if low is not None and isinstance(v["value"], Literal):
        new = low if comp == "lessThanOrEquals" else _nudge(low, -1)
        out += _replace("lessThan.adjust", ctx, v, new)
    return out + _drop("lessThan.adjust", ctx, v, v["value"], "drop")


def closed_drop(ctx: Context, v: dict) -> list[Patch]:
    """sh:closed: drop the triple whose property the closed shape does not allow."""
    p, f = v["path"], v["focus"]
    t = (f, p, v["value"])
    if not isinstance(p, URIRef) or t not in ctx.graph:
        return []
    return [Patch("closed.drop_property", frozenset(), frozenset({t}), frozenset({f}))]


def node_descend(ctx: Context, v: dict) -> list[Patch]:
    """sh:node: repair the value node against the referenced shape (its own violations, recursively)."""
    shape = ctx.param(v["shape"], "node")
    if isinstance(ctx.hint, dict):
        return _replay("node.descend", ctx, v, shape, ctx.hint)
    return _descend_all("node.descend", ctx, v["value"], [shape], v["focus"]) or _swap_term("node.descend", ctx, v,
                                                                                             shape)


def and_descend(ctx: Context, v: dict) -> list[Patch]:
    """sh:and: repair the value node against every member shape."""
    members = ctx.listed(v["shape"], "and")
    if isinstance(ctx.hint, dict):
        return _replay_descend("and.descend", ctx, v["value"], members, ctx.hint, v["focus"])
    return _descend_all("and.descend", ctx, v["value"], members, v["focus"])


def or_branch(ctx: Context, v: dict) -> list[Patch]:
    """sh:or: make the value conform to one member shape (or swap a literal for one that does); smallest first."""
    members = ctx.listed(v["shape"], "or")
    if isinstance(ctx.hint, dict):
        return _replay_branch("or.satisfy_branch", ctx, v, members)
    out = []
    for i, member in enumerate(members):
        found = _descend_all("or.satisfy_branch", ctx, v["value"], [member], v["focus"])
        found = found or _swap_term("or.satisfy_branch", ctx, v, member)
        out += [Patch(p.operator, p.added, p.removed, p.touches, _branch(i, p.choice)) for p in found]
    return sorted(out, key=lambda p: p.size)


def _branch(i: int, plan) -> dict | None:
    """The compiled choice of an sh:or branch: its position plus the plan that repaired it (None: no plan)."""
    return {"branch": i, "plan": plan} if isinstance(plan, dict) else None


def _replay_branch(name: str, ctx: Context, v: dict, members: list) -> list[Patch]:
    """Apply a compiled branch choice (ctx.hint) with no trial checks; [] when it does not fit these shapes."""
    i, plan = ctx.hint.get("branch"), ctx.hint.get("plan")
    if not isinstance(i, int) or not 0 <= i < len(members) or not isinstance(plan, dict):
        return []
    return [Patch(p.operator, p.added, p.removed, p.touches, ctx.hint) for p in _replay(name, ctx, v, members[i], plan)]


def _replay(name: str, ctx: Context, v: dict, member, plan: dict) -> list[Patch]:
    """Apply a compiled plan (a swap option or descent steps) for `member` without trial checks."""
    if plan.get("kind") == "swap" and plan.get("shape") == shape_key(ctx.shapes, member):
        return _swap_term(name, ctx, v, member, only=plan.get("option"))
    if plan.get("kind") == "descend":
        return _replay_descend(name, ctx, v["value"], [member], plan, v["focus"])
    return []


def _swap_options(ctx: Context, val: Literal, shape) -> list[tuple]:
    """(rule, value) pairs a literal may be swapped for: hasValue, first listed, converted, default, instance."""
    d, listed, cls = ctx.param(shape, "datatype"), ctx.listed(shape, "in"), ctx.param(shape, "class")
    out = [("hasValue", ctx.param(shape, "hasValue")), ("in", (listed or [None])[0])]
    out += [("convert", _convert(val, d)), ("default", default_literal(d))] if d is not None else []
    return out + [("instance", (instances(ctx.graph, cls) or [None])[0])] if cls is not None else out


def _swap_term(name: str, ctx: Context, v: dict, shape, only: str | None = None) -> list[Patch]:
    """Swap a literal for one derived from `shape` that conforms to it (checked, unless `only` names the rule)."""
    val = v["value"]
    if not isinstance(val, Literal) or ctx.depth >= MAX_DEPTH:
        return []
    for rule, new in _swap_options(ctx, val, shape):
        if new is None or only not in (None, rule):
            continue
        plan = {"kind": "swap", "shape": shape_key(ctx.shapes, shape), "option": rule}
        for p in _replace(name, ctx, v, new, plan):
            if only is not None or not ctx.nested(new, shape, applied(ctx.graph, p)):
                return [p]
    return []


def xone_one(ctx: Context, v: dict) -> list[Patch]:
    """sh:xone: make the value conform to exactly one member shape (repair one, break the others)."""
    members, node, out, name = ctx.listed(v["shape"], "xone"), v["value"], [], "xone.satisfy_one"
    if isinstance(ctx.hint, dict):
        return _replay_xone(ctx, v, members)
    ok = [not ctx.nested(node, m) for m in members]
    for i, m in enumerate(members):
        base = [_planned(ctx, Patch(name), node, [m], [])] if ok[i] else _descend_all(name, ctx, node, [m], v["focus"])
        out += [p for p in (_break_others(ctx, v, members, i, b) for b in base) if p is not None and p.size]
    return sorted(out, key=lambda p: p.size)


def _break_others(ctx: Context, v: dict, members: list, i: int, p: Patch) -> Patch | None:
    """`p` plus a checked patch breaking each other member the value still conforms to; the choice records all."""
    work, breaks, node, plan = applied(ctx.graph, p), [], v["value"], p.choice
    for j, other in enumerate(members):
        if j != i and not ctx.nested(node, other, work):
            br = _break(ctx.deeper(work), node, other, v)
            if not br:
                return None
            work, p = applied(work, br[0]), _merge(p.operator, p, br[0])
            breaks.append([j, br[0].choice])
    stable = isinstance(plan, dict) and all(isinstance(kind, str) for _, kind in breaks)
    choice = {"branch": i, "plan": plan, "breaks": breaks} if stable else None
    return Patch(p.operator, p.added, p.removed, p.touches | {v["focus"]}, choice)


def _replay_xone(ctx: Context, v: dict, members: list) -> list[Patch]:
    """Apply a compiled xone choice: satisfy the kept member by its plan, break the others by their rules, unchecked."""
    h, name = ctx.hint, "xone.satisfy_one"
    i = h.get("branch")
    if not isinstance(i, int) or not 0 <= i < len(members) or not isinstance(h.get("plan"), dict):
        return []
    p = _run_steps(name, ctx, v["value"], [members[i]], h["plan"], v["focus"])
    work = applied(ctx.graph, p) if p is not None else None
    for j, kind in h.get("breaks", []) if p is not None else []:
        if not isinstance(j, int) or not 0 <= j < len(members):
            return []
        br = [b for b, _ in _break_candidates(ctx.deeper(work), v["value"], members[j], v) if b.choice == kind]
        if not br:
            return []
        work, p = applied(work, br[0]), _merge(name, p, br[0])
    return [Patch(name, p.added, p.removed, p.touches | {v["focus"]}, h)] if p is not None and p.size else []


def not_break(ctx: Context, v: dict) -> list[Patch]:
    """sh:not: change the value so it no longer conforms to the negated shape (a compiled rule: no trial check)."""
    shape = ctx.param(v["shape"], "not")
    if isinstance(ctx.hint, str):
        return [p for p, _ in _break_candidates(ctx, v["value"], shape, v) if p.choice == ctx.hint]
    return _break(ctx, v["value"], shape, v)


def qualified_min(ctx: Context, v: dict) -> list[Patch]:
    """sh:qualifiedMinCount: link existing conforming nodes, else add new ones repaired to conform."""
    q, path, f = ctx.param(v["shape"], "qualifiedValueShape"), path_of(ctx, v), v["focus"]
    need = int(ctx.param(v["shape"], "qualifiedMinCount")) - _conforming_count(ctx, v)
    siblings = _siblings(ctx, v["shape"]) if _is_true(ctx.param(v["shape"], "qualifiedValueShapesDisjoint")) else []
    have = set(values(ctx, f, path))
    pool = [n for n in _candidates(ctx, q) if n not in have and n != f and _fits(ctx, n, q, siblings)]
    added: set = set()
    for i in range(max(0, need)):
        node = pool[i] if i < len(pool) else fresh(f, v["shape"], i)
        links = link_triples(ctx, f, path, node)
        if links is None:
            return []
        added |= links
        if i >= len(pool):
            fix = _descend_all("qualified.add_conforming", ctx.deeper(applied(ctx.graph, Patch("", frozenset(added)))),
                               node, [q], f)
            added |= set(fix[0].added) if fix else set()
    return [Patch("qualified.add_conforming", frozenset(added), frozenset(), frozenset({f}))] if added else []


def qualified_max(ctx: Context, v: dict) -> list[Patch]:
    """sh:qualifiedMaxCount: drop surplus values that conform to the qualified shape."""
    q, path, f = ctx.param(v["shape"], "qualifiedValueShape"), path_of(ctx, v), v["focus"]
    conforming = [x for x in values(ctx, f, path) if _conforms(ctx, x, q)]
    drop = [value_triple(ctx, f, path, x) for x in conforming[int(ctx.param(v["shape"], "qualifiedMaxCount")):]]
    if not drop or None in drop:
        return []
    return [Patch("qualified.drop_surplus", frozenset(), frozenset(drop), frozenset({f}))]


# ---------- helpers for nested shapes ----------

def applied(g: Graph, p: Patch) -> Graph:
    """A copy of `g` with a patch applied (`g` itself is not modified)."""
    out = Graph()
    for t in g:
        if t not in p.removed:
            out.add(t)
    for t in p.added:
        out.add(t)
    return out


def _merge(name: str, a: Patch, b: Patch) -> Patch:
    """Two patches as one (b after a)."""
    added = (a.added - b.removed) | b.added
    removed = (a.removed - b.added) | (b.removed - a.added)
    return Patch(name, frozenset(added), frozenset(removed), a.touches | b.touches, a.choice)


def _descend_all(name: str, ctx: Context, node, shapes_list, focus) -> list[Patch]:
    """One patch making `node` conform to every shape in the list, by repairing its nested violations."""
    if node is None or ctx.depth >= MAX_DEPTH or None in shapes_list:
        return []
    total, work, done = Patch(name, touches=frozenset({focus})), ctx.graph, []
    for _ in range(3):
        nested = [x for s in shapes_list for x in ctx.nested(node, s, work)]
        if not nested:
            return [_planned(ctx, total, node, shapes_list, done)]
        step = _first_fixes(ctx.deeper(work), nested, node, done)
        if step is None:
            return []
        work, total = applied(work, step), _merge(name, total, step)
    return [_planned(ctx, total, node, shapes_list, done)] if not any(ctx.nested(node, s, work)
                                                                       for s in shapes_list) else []


def _first_fixes(ctx: Context, nested: list[dict], node, done: list) -> Patch | None:
    """The first candidate of each nested violation, merged (each recorded in `done`); None when one has none."""
    total = Patch("nested")
    for v in nested:
        cands = candidates(ctx, v)
        if not cands:
            return None
        best = cands[0]
        done.append([shape_key(ctx.shapes, v["shape"]), best.operator, _value_rule(v, node, best), best.choice])
        total = _merge("nested", total, best)
    return total


# Strategies that derive nothing when their constraint already holds: safe to replay on every value of a path.
SELF_CHECKING = {"class.add_type", "minCount.add_values", "hasValue.add_value", "maxCount.drop_surplus",
                 "range.clamp", "datatype.cast", "minLength.pad", "maxLength.truncate", "node.descend", "and.descend"}


def _value_rule(v: dict, node, p: Patch) -> str | None:
    """Where a nested violation's value comes from: "none", "node" (the node itself), "each" value, or None."""
    if v["value"] is None:
        return "none"
    if v["value"] == node:
        return "node"
    swaps = isinstance(p.choice, dict) and p.choice.get("kind") == "swap"
    return "each" if p.operator in SELF_CHECKING and not swaps else None


def _planned(ctx: Context, total: Patch, node, shapes_list, done: list) -> Patch:
    """`total` carrying its compiled plan: the steps taken plus every count/value rule of the shapes (None: none)."""
    if any(step[2] is None for step in done):
        return total
    steps = list(done)
    for s in shapes_list:
        for ps in [s, *ctx.params(s, "property")]:
            steps += [[shape_key(ctx.shapes, ps), op, "none", None] for comp, op in _FILLERS
                      if ctx.param(ps, comp) is not None and ctx.param(ps, "path") is not None]
    plan = {"kind": "descend", "shape": _members_key(ctx, shapes_list), "steps": _unique(steps)}
    return Patch(total.operator, total.added, total.removed, total.touches, plan)


_FILLERS = (("minCount", "minCount.add_values"), ("hasValue", "hasValue.add_value"))


def _unique(steps: list) -> list:
    """Steps without repeats (first occurrence kept)."""
    out = []
    for s in steps:
        if s not in out:
            out.append(s)
    return out


def _replay_descend(name: str, ctx: Context, node, shapes_list, plan: dict, focus) -> list[Patch]:
    """Apply compiled descent steps to `node` with no trial checks; [] when the shapes differ or nothing changes."""
    p = _run_steps(name, ctx, node, shapes_list, plan, focus)
    return [p] if p is not None and p.size else []


def _run_steps(name: str, ctx: Context, node, shapes_list, plan: dict, focus) -> Patch | None:
    """The patch a compiled plan's steps derive for `node` (maybe empty); None when the plan does not fit."""
    if node is None or plan.get("shape") != _members_key(ctx, shapes_list) or ctx.depth >= MAX_DEPTH:
        return None
    total, work = Patch(name, touches=frozenset({focus})), ctx.graph
    for key, op, rule, choice in plan.get("steps", []):
        shape = find_shape(ctx.shapes, shapes_list, key)
        if shape is None:
            return None
        for v in _synthetic(Context(work, ctx.shapes), node, shape, rule, op):
            got = run_strategy(op, Context(work, ctx.shapes, ctx.depth + 1, ctx.checks, choice), v)
            if got:
                work, total = applied(work, got[0]), _merge(name, total, got[0])
    return Patch(name, total.added, total.removed, total.touches, plan)


def _synthetic(ctx: Context, node, shape, rule: str, operator: str) -> list[dict]:
    """The violations a compiled step stands for, built from the shape (no validation run)."""
    path = ctx.param(shape, "path")
    base = {"focus": node, "shape": shape, "component": STRATEGIES[operator][0] if operator in STRATEGIES else None,
            "path": path, "signature": "", "message": "", "severity": None}
    if rule == "none":
        return [base | {"value": None}]
    if rule == "node":
        return [base | {"value": node}]
    return [base | {"value": x} for x in values(ctx, node, path)] if rule == "each" else []


def _members_key(ctx: Context, shapes_list) -> str:
    """The fingerprint of a list of member shapes."""
    return "+".join(shape_key(ctx.shapes, s) for s in shapes_list)


def shape_key(shapes: Graph, shape) -> str:
    """A stable fingerprint of a shape: its IRI (or "_") and its constraints, blank nodes described by content."""
    head = shape.n3() if isinstance(shape, URIRef) else "_"
    body = sorted(f"{p.n3()} {_describe(shapes, o, 1)}" for p, o in shapes.predicate_objects(shape))
    return sha256(head + "[" + "; ".join(body) + "]")[:16]


def _describe(shapes: Graph, node, depth: int) -> str:
    """Canonical text of a term: IRIs and literals as N3, lists and blank nodes by their content."""
    if not isinstance(node, BNode) or depth > 8:
        return node.n3() if not isinstance(node, BNode) else "[...]"
    if shapes.value(node, RDF.first) is not None:
        return "(" + " ".join(_describe(shapes, m, depth + 1) for m in Collection(shapes, node)) + ")"
    return "[" + "; ".join(sorted(f"{p.n3()} {_describe(shapes, o, depth + 1)}"
                                  for p, o in shapes.predicate_objects(node))) + "]"


def find_shape(shapes: Graph, roots, key: str):
    """The shape with fingerprint `key` among `roots` and the shapes they reach (a few hops), or None."""
    seen, todo = set(), [(r, 0) for r in roots]
    while todo:
        node, depth = todo.pop(0)
        if node in seen or isinstance(node, Literal):
            continue
        seen.add(node)
        if shape_key(shapes, node) == key:
            return node
        if depth < 4:
            todo += [(o, depth + 1) for _, o in sorted(shapes.predicate_objects(node)) if isinstance(o, BNode | URIRef)]
    return None


def _break(ctx: Context, node, shape, v: dict) -> list[Patch]:
    """Patches after which `node` (or the value replacing it) no longer conforms to `shape`, each checked."""
    out = []
    for p, check in _break_candidates(ctx, node, shape, v):
        if check is None or ctx.nested(check, shape, applied(ctx.graph, p)):
            out.append(p)
    return out


def _break_candidates(ctx: Context, node, shape, v: dict) -> list[tuple]:
    """(patch, node to re-check or None): drop a type, drop needed values, retype a literal, drop the value."""
    name, f, g, out = "not.break", v["focus"], ctx.graph, []
    cls = ctx.param(shape, "class")
    if cls is not None:
        types = {(node, RDF.type, t) for t in g.objects(node, RDF.type)
                 if cls in set(g.transitive_objects(t, RDFS.subClassOf))}
        out.append((Patch(name, frozenset(), frozenset(types), frozenset({node}), "drop-type"), node))
    for ps in ctx.params(shape, "property"):
        path = ctx.param(ps, "path")
        if isinstance(path, URIRef) and (ctx.param(ps, "minCount") or ctx.param(ps, "hasValue")) is not None:
            drop = frozenset(g.triples((node, path, None)))
            out.append((Patch(name, frozenset(), drop, frozenset({node}), f"drop-values:{path}"), node))
    if isinstance(node, Literal) and ctx.param(shape, "datatype") is not None:
        new = Literal(str(node)) if ctx.param(shape, "datatype") != XSD.string else Literal(str(node), lang="und")
        out += [(p, new) for p in _replace(name, ctx, v, new, "retype")]
    if node != f:
        out += [(p, None) for p in _drop(name, ctx, v, node, "drop")]
    return [(p, c) for p, c in out if p.size]


def _conforming_count(ctx: Context, v: dict) -> int:
    """Values of the focus that conform to the qualified value shape (and to no disjoint sibling)."""
    q = ctx.param(v["shape"], "qualifiedValueShape")
    sib = _siblings(ctx, v["shape"]) if _is_true(ctx.param(v["shape"], "qualifiedValueShapesDisjoint")) else []
    return sum(_fits(ctx, x, q, sib) for x in values(ctx, v["focus"], path_of(ctx, v)))


def _fits(ctx: Context, node, q, siblings) -> bool:
    """True when `node` conforms to `q` and to none of the sibling qualified shapes."""
    return _conforms(ctx, node, q) and not any(_conforms(ctx, node, s) for s in siblings)


def _conforms(ctx: Context, node, shape) -> bool:
    """Does `node` conform to `shape`? Read off the data for a shape of sh:class only, else one nested check."""
    sh = str(SH)
    own = {p for p in ctx.shapes.predicates(shape, None) if str(p).startswith(sh)}
    if own == {SH["class"]} and not isinstance(node, Literal):
        return all(is_instance(ctx.graph, node, c) for c in ctx.params(shape, "class"))
    return not ctx.nested(node, shape)


def _siblings(ctx: Context, prop_shape) -> list:
    """Qualified value shapes of sibling property shapes (for sh:qualifiedValueShapesDisjoint)."""
    q = ctx.param(prop_shape, "qualifiedValueShape")
    parents = set(ctx.shapes.subjects(SH.property, prop_shape))
    out = {ctx.param(ps, "qualifiedValueShape") for p in parents for ps in ctx.params(p, "property")}
    return sorted(s for s in out if s is not None and s != q)


def _candidates(ctx: Context, q) -> list:
    """Existing nodes worth trying as values for a qualified shape: instances of its sh:class."""
    cls = ctx.param(q, "class")
    return instances(ctx.graph, cls) if cls is not None else []


def _is_true(x) -> bool:
    """True for a literal true."""
    return isinstance(x, Literal) and x.toPython() is True


# ---------- registry ----------

STRATEGIES = {
    "class.add_type": (SH.ClassConstraintComponent, {"class": "shape sh:class"}, class_add_type),
    "class.link_instance": (SH.ClassConstraintComponent, {"instance": "first instance of shape sh:class in graph"},
                            class_link_instance),
    "datatype.cast": (SH.DatatypeConstraintComponent, {"datatype": "shape sh:datatype", "lexical": "value"},
                      datatype_cast),
    "datatype.convert": (SH.DatatypeConstraintComponent, {"datatype": "shape sh:datatype",
                                                          "lexical": "converted value or datatype default"},
                         datatype_convert),
    "nodeKind.convert": (SH.NodeKindConstraintComponent, {"kind": "shape sh:nodeKind"}, nodekind_convert),
    "minCount.add_values": (SH.MinCountConstraintComponent, {"count": "shape sh:minCount",
                                                             "value": "shape hasValue|in|class|datatype|fresh"},
                            mincount_add),
    "maxCount.drop_surplus": (SH.MaxCountConstraintComponent, {"count": "shape sh:maxCount",
                                                               "keep": "best-typed values"}, maxcount_drop),
    "minLength.pad": (SH.MinLengthConstraintComponent, {"length": "shape sh:minLength"}, minlength_pad),
    "maxLength.truncate": (SH.MaxLengthConstraintComponent, {"length": "shape sh:maxLength"}, maxlength_truncate),
    "pattern.generate": (SH.PatternConstraintComponent, {"pattern": "shape sh:pattern", "flags": "shape sh:flags"},
                         pattern_generate),
    "in.pick_listed": (SH.InConstraintComponent, {"value": "shape sh:in member"}, in_pick),
    "hasValue.add_value": (SH.HasValueConstraintComponent, {"value": "shape sh:hasValue"}, hasvalue_add),
    "range.clamp": (None, {"bound": "shape sh:min/maxInclusive/Exclusive"}, range_clamp),
    "languageIn.retag": (SH.LanguageInConstraintComponent, {"lang": "first of shape sh:languageIn"},
                         languagein_retag),
    "uniqueLang.drop_duplicates": (SH.UniqueLangConstraintComponent, {"keep": "first value per language"},
                                   uniquelang_drop),
    "equals.align": (SH.EqualsConstraintComponent, {"property": "shape sh:equals"}, equals_add),
    "disjoint.drop_shared": (SH.DisjointConstraintComponent, {"property": "shape sh:disjoint"}, disjoint_drop),
    "lessThan.adjust": (None, {"property": "shape sh:lessThan|lessThanOrEquals"}, lessthan_adjust),
    "closed.drop_property": (SH.ClosedConstraintComponent, {"allowed": "shape sh:property paths + ignored"},
                             closed_drop),
    "node.descend": (SH.NodeConstraintComponent, {"shape": "shape sh:node"}, node_descend),
    "and.descend": (SH.AndConstraintComponent, {"shapes": "shape sh:and"}, and_descend),
    "or.satisfy_branch": (SH.OrConstraintComponent, {"shapes": "shape sh:or", "branch": "choice"}, or_branch),
    "xone.satisfy_one": (SH.XoneConstraintComponent, {"shapes": "shape sh:xone", "keep": "choice"}, xone_one),
    "not.break": (SH.NotConstraintComponent, {"shape": "shape sh:not"}, not_break),
    "qualified.add_conforming": (SH.QualifiedMinCountConstraintComponent, {"shape": "shape sh:qualifiedValueShape"},
                                 qualified_min),
    "qualified.drop_surplus": (SH.QualifiedMaxCountConstraintComponent, {"shape": "shape sh:qualifiedValueShape"},
                               qualified_max),
}

REGISTRY: dict = {}
for _name, (_comp, _, _) in STRATEGIES.items():
    REGISTRY.setdefault(_comp, []).append(_name)
for _comp in ("MinInclusive", "MinExclusive", "MaxInclusive", "MaxExclusive"):
    REGISTRY[SH[f"{_comp}ConstraintComponent"]] = ["range.clamp"]
REGISTRY[SH.LessThanConstraintComponent] = REGISTRY[SH.LessThanOrEqualsConstraintComponent] = ["lessThan.adjust"]
del REGISTRY[None]

TERM_COMPONENTS = {SH[f"{c}ConstraintComponent"] for c in (
    "Datatype", "NodeKind", "MinLength", "MaxLength", "Pattern", "In", "HasValue", "LanguageIn", "MinInclusive",
    "MinExclusive", "MaxInclusive", "MaxExclusive")}


def register(name: str, component, bindings: dict, function) -> None:
    """Add a strategy (appended to its component's default order); ValueError when the id is taken."""
    if name in STRATEGIES:
        raise ValueError(f"strategy {name!r} already exists; pick another id")
    STRATEGIES[name] = (component, dict(bindings), function)
    REGISTRY.setdefault(component, []).append(name)


def strategies_for(component) -> list[str]:
    """Strategy ids for a constraint component IRI, in default order (empty when none exists)."""
    return list(REGISTRY.get(component, []))


def run_strategy(name: str, ctx: Context, violation: dict) -> list[Patch]:
    """Candidate patches of one strategy for one violation (empty when it does not apply)."""
    if name not in STRATEGIES:
        return []
    try:
        return STRATEGIES[name][2](ctx, violation)
    except (TypeError, ValueError, ArithmeticError):
        return []


def candidates(ctx: Context, violation: dict, prefer: list[str] = ()) -> list[Patch]:
    """Every candidate patch for a violation: preferred strategies first, then the library order."""
    return list(iter_candidates(ctx, violation, prefer))


def iter_candidates(ctx: Context, violation: dict, prefer: list[str] = ()):
    """Candidate patches lazily, strategy by strategy (a later strategy runs only when asked for)."""
    for name in dict.fromkeys([*prefer, *strategies_for(violation["component"])]):
        yield from run_strategy(name, ctx, violation)


def is_fixed_term(violation: dict, shapes: Graph) -> bool:
    """True when a node-level constraint judges the focus node's own term and no data edit can change that term."""
    if violation["component"] not in TERM_COMPONENTS or violation["path"] is not None:
        return False
    return not isinstance(violation["focus"], Literal) or (None, SH.targetNode, violation["focus"]) in shapes
