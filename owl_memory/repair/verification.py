"""Verify a graph against SHACL shapes with pySHACL and reduce the report to a compact, signature-keyed summary."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.collection import Collection

from ..adapters import pyshacl as shacl, sparql as sparql_text
from ..errors import ConfigError, LoadError
from ..model import Ref, Violation, violation_signature
from ..model.violations import value_kind
from ..rdfio import load_graph
from ..store import PayloadStore
from ..vocab import OWL, RDF, RDFS, SH

INFERENCE = ("none", "rdfs", "owlrl", "both")
_NESTING = (SH.node, SH.qualifiedValueShape, SH["and"], SH["or"], SH.xone, SH["not"], SH.sparql)
_PATH_KINDS = ((SH.inversePath, "^"), (SH.zeroOrMorePath, "*"), (SH.oneOrMorePath, "+"), (SH.zeroOrOnePath, "?"))


@dataclass
class VerifyResult:
    """The compact outcome of one SHACL validation.

    Args:
        conforms: True when the graph conforms to the shapes.
        violation_count: number of validation results (every severity).
        signatures: violation signature -> number of results with it.
        focus_nodes: focus nodes of the results (N3 form), capped at max_focus.
        report_ref: handle on the Turtle report in the blob store, when a store was given.
        scope: "full" (whole graph validated) or "focus" (only the given focus nodes).
        violations: one Violation per result.
    """

    conforms: bool
    violation_count: int
    signatures: dict = field(default_factory=dict)
    focus_nodes: list = field(default_factory=list)
    report_ref: Ref | None = None
    scope: str = "full"
    violations: list = field(default_factory=list)

    def to_dict(self) -> dict:
        """JSON-compatible summary (no violation details beyond signatures and capped focus nodes)."""
        return {"conforms": self.conforms, "violation_count": self.violation_count, "signatures": self.signatures,
                "focus_nodes": self.focus_nodes, "scope": self.scope,
                "report_ref": self.report_ref.to_dict() if self.report_ref else None}


def verify(data, shapes, *, focus=None, inference="none", blobs: PayloadStore | None = None,
           max_focus: int = 20) -> VerifyResult:
    """Validate `data` against `shapes` (pySHACL, advanced); only `focus` nodes when that is sound, else all."""
    if inference not in INFERENCE:
        raise ConfigError(f"inference {inference!r} is not one of {', '.join(INFERENCE)}; pick one of those")
    data, shapes = load_graph(data), _copy(load_graph(shapes))  # pySHACL adds triples to the shapes graph
    scope = "focus" if focus_is_sound(shapes, focus) else "full"
    kwargs = {"focus_nodes": sorted(str(n) for n in focus)} if scope == "focus" else {}
    report = _validate(data, shapes, inference=None if inference == "none" else inference, **kwargs)
    violations = violations_of(report)
    ref = blobs.put(report.serialize(format="turtle"), kind="report") if blobs is not None else None
    focus_nodes = sorted({str(v.focus) for v in violations})
    return VerifyResult(conforms=not violations, violation_count=len(violations),
                        signatures=dict(sorted(Counter(v.signature for v in violations).items())),
                        focus_nodes=focus_nodes[:max_focus], report_ref=ref, scope=scope, violations=violations)


def _validate(data: Graph, shapes: Graph, **kwargs) -> Graph:
    """pySHACL (advanced mode) -> report graph; a malformed shapes graph, a SPARQL target that does not parse or
    select ?this, a pattern Python's re cannot compile or a SHACL-SPARQL query with an undeclared prefix becomes a
    LoadError naming the culprit (other failures pass through)."""
    try:
        return shacl.validate(data, shacl_graph=shapes, advanced=True, **kwargs)[1]
    except Exception as e:  # pySHACL and rdflib raise many types; failure_of sorts them, the checks name the culprit
        kind = shacl.failure_of(e)
        if kind == "shapes":
            raise LoadError(f"the shapes graph is not valid SHACL: {str(e).strip()[:300]}; fix the shapes and "
                            "retry") from e
        if kind == "target":
            _check_sparql_targets(shapes, e)
        elif kind == "pattern":
            _check_patterns(shapes, e)
        else:  # rdflib raises a bare Exception for a prefix a SHACL-SPARQL query does not declare
            _check_sparql_prefixes(data, shapes, e)
        raise


def re_flags(flags) -> int:
    """Python re flags for a sh:flags value (None: none), as pySHACL reads it: "i" (ignore case) and "m" (^ and $ at
    every line), in either case; it ignores every other letter ("s", "x", "q"), so the repairer does too."""
    text = str(flags or "").lower()
    return (re.IGNORECASE if "i" in text else 0) | (re.MULTILINE if "m" in text else 0)


def _check_patterns(shapes: Graph, cause: Exception) -> None:
    """LoadError (from `cause`) naming the first shape whose sh:pattern (with its sh:flags) Python's re, which
    pySHACL matches with, cannot compile: XPath regexes (SHACL's) have constructs it lacks, such as \\p{Lu}."""
    for shape, pattern in sorted(shapes.subject_objects(SH.pattern), key=str):
        try:
            re.compile(str(pattern), re_flags(shapes.value(shape, SH.flags)))
        except re.error as e:
            raise LoadError(f"the sh:pattern {pattern.n3()} of {_shape_name(shapes, shape)} is not a regular "
                            f"expression pySHACL can match with (Python's re: {e.msg} at position {e.pos}); rewrite "
                            "it without that construct (e.g. [A-Z] for \\p{Lu}) and retry") from cause


def _shape_name(shapes: Graph, shape) -> str:
    """A shape as a user finds it in the file: its IRI, or for a blank property shape its node shape and path."""
    if not isinstance(shape, BNode):
        return f"shape {shape.n3(shapes.namespace_manager)}"
    owner, path = shapes.value(None, SH.property, shape), shapes.value(shape, SH.path)
    where = f" on {path.n3(shapes.namespace_manager)}" if isinstance(path, URIRef) else ""
    return f"the property shape{where} of {owner.n3(shapes.namespace_manager)}" if isinstance(owner, URIRef) \
        else f"a blank shape{where}"


def _check_sparql_prefixes(data: Graph, shapes: Graph, cause: Exception) -> None:
    """LoadError (from `cause`) naming the shape whose SHACL-SPARQL query (sh:select or sh:ask) uses a prefix that
    neither the query, its sh:prefixes nor the data graph declares, read off the parsed query."""
    known = {p for p, _ in data.namespace_manager.namespaces()}
    for node, text in sorted((*shapes.subject_objects(SH.select), *shapes.subject_objects(SH.ask)), key=str):
        report = sparql_text.prefix_report(str(text))
        if report is None:
            continue
        declared, used = report
        missing = sorted(used - declared - _declared_prefixes(shapes, node) - known)
        if missing:
            owner = next(iter(sorted(shapes.subjects(None, node), key=str)), node)
            raise LoadError(f"the SPARQL query of {owner.n3()} uses the prefix {missing[0]}: without declaring it; "
                            f"add a PREFIX line to the query or declare it with sh:prefixes (sh:declare [ sh:prefix "
                            f'"{missing[0]}" ; sh:namespace "..."^^xsd:anyURI ]) in the shapes, and retry') from cause


def _declared_prefixes(shapes: Graph, node) -> set:
    """Prefixes a SHACL-SPARQL query node declares through sh:prefixes / sh:declare."""
    return {str(p) for o in shapes.objects(node, SH.prefixes) for d in shapes.objects(o, SH.declare)
            for p in shapes.objects(d, SH.prefix)}


def _check_sparql_targets(shapes: Graph, cause: Exception) -> None:
    """LoadError (from `cause`) for a SHACL-SPARQL target (sh:target or a sh:SPARQLTargetType) whose sh:select does
    not parse or does not select ?this, checked on the parsed query. Such a target is harmless while it matches
    nothing (real shapes files carry them), so pySHACL is let run first and this names the culprit when it fails."""
    for node, fault in broken_sparql_targets(shapes)[:1]:
        raise LoadError(f"the sh:select of SPARQL target {node.n3()} {fault}; fix the shapes and retry") from cause


def broken_sparql_targets(shapes: Graph) -> list[tuple]:
    """(target node, what is wrong) for every SHACL-SPARQL target (sh:target or a sh:SPARQLTargetType) whose
    sh:select does not parse or does not select ?this, read off the parsed query; sorted."""
    targets = set(shapes.objects(None, SH.target)) | set(shapes.subjects(RDF.type, SH.SPARQLTargetType))
    out = []
    for node in sorted(targets, key=str):
        for select in shapes.objects(node, SH.select):
            try:
                names = sparql_text.projection(str(select))
            except sparql_text.QuerySyntaxError as e:
                out.append((node, str(e)))
                continue
            if names is None:  # SELECT *: ?this is selected when the pattern binds it
                continue
            if "?this" not in names:
                out.append((node, f"selects {', '.join(names)} but not ?this; a SHACL-SPARQL target must select "
                                  "its focus nodes as ?this (SELECT ?this WHERE ...)"))
    return out


def _copy(g: Graph) -> Graph:
    """A plain in-memory copy of a graph."""
    out = Graph()
    out += g
    return out


def focus_is_sound(shapes: Graph, focus) -> bool:
    """True when validating only `focus` finds every result: IRI focus nodes and shapes that look one hop deep."""
    if not focus or not all(isinstance(n, URIRef) for n in focus):
        return False
    if any(True for p in _NESTING for _ in shapes.triples((None, p, None))):
        return False
    if any(True for _ in shapes.triples((None, SH.target, None))):
        return False
    return all(_is_shallow_path(shapes, p) for p in shapes.objects(None, SH.path))


def _is_shallow_path(shapes: Graph, path) -> bool:
    """A predicate path or the inverse of one."""
    if isinstance(path, URIRef):
        return True
    inverse = shapes.value(path, SH.inversePath)
    return isinstance(inverse, URIRef) and len(set(shapes.predicate_objects(path))) == 1


def delta_focus(graph: Graph, added, removed) -> set | None:
    """Nodes whose results a delta can change (its nodes and neighbours); None when only a full run is sound."""
    delta = set(added) | set(removed)
    if any(p in (RDFS.subClassOf, RDF.first, RDF.rest) or str(p).startswith(str(SH)) for _, p, _ in delta):
        return None
    nodes = {n for s, _, o in delta for n in (s, o) if not isinstance(n, Literal)}
    near = {o for n in nodes for o in graph.objects(n, None)} | {s for n in nodes for s in graph.subjects(None, n)}
    return {n for n in nodes | near if not isinstance(n, Literal)}


def violations_of(report: Graph) -> list[Violation]:
    """One Violation per sh:ValidationResult of a pySHACL report graph (sh:detail results too, each naming the result
    it details), sorted for determinism."""
    found = {}
    for r in report.subjects(RDF.type, SH.ValidationResult):
        comp, shape, value = (report.value(r, p) for p in (SH.sourceConstraintComponent, SH.sourceShape, SH.value))
        path = report.value(r, SH.resultPath)
        text, focus = path_text(report, path), report.value(r, SH.focusNode)
        assert focus is not None  # every validation result has a sh:focusNode (SHACL 3.6.2)
        found[r] = Violation(focus=focus, component=comp, shape=shape, path=path,
                             value=value, message=str(report.value(r, SH.resultMessage) or ""),
                             severity=report.value(r, SH.resultSeverity), path_text=text,
                             signature=violation_signature(comp, shape, text, value))
    parents = {d: " | ".join(found[r].key) for r, d in report.subject_objects(SH.detail) if r in found}
    out = [replace(v, detail_of=parents.get(r, "")) for r, v in found.items()]
    return sorted(out, key=lambda v: (v.signature, v.focus.n3(), v.value.n3() if v.value is not None else ""))


def path_text(graph: Graph, path) -> str:
    """A SPARQL-like text of a SHACL path with no blank node ids ("-" when there is none)."""
    if path is None:
        return "-"
    if isinstance(path, URIRef):
        return f"<{path}>"
    if graph.value(path, RDF.first) is not None or path == RDF.nil:
        return "(" + "/".join(path_text(graph, p) for p in Collection(graph, path)) + ")"
    for pred, mark in _PATH_KINDS:
        inner = graph.value(path, pred)
        if inner is not None:
            return f"^{path_text(graph, inner)}" if mark == "^" else f"({path_text(graph, inner)}){mark}"
    alt = graph.value(path, SH.alternativePath)
    if alt is not None:
        return "(" + "|".join(path_text(graph, p) for p in Collection(graph, alt)) + ")"
    return "?"


def abstract_signature(v: Violation, shapes: Graph) -> str:
    """A shape-independent key: component | path form | value kind (Node, Literal, Literal:<datatype> under a
    datatype role, none) | the shape's datatype or class role.

    Path forms: none, predicate, inverse, sequence, alternative, zeroOrMore, oneOrMore, zeroOrOne (outermost).
    """
    comp = str(v.component).removeprefix(str(SH)) if v.component is not None else "?"
    role = "-"
    if v.shape is not None:
        role = "class" if shapes.value(v.shape, SH["class"]) is not None else \
            "datatype" if shapes.value(v.shape, SH.datatype) is not None else "-"
    kind = value_kind(v.value)
    kind = "Literal" if kind.startswith("Literal") and role != "datatype" else kind
    kind = "Node" if kind in ("IRI", "BlankNode") else kind  # a node that can carry properties, named or not
    return f"abstract:{comp}|{path_form(v.path_text)}|{kind}|{role}"


def abstract_signatures(v: Violation, shapes: Graph) -> list[str]:
    """The abstract keys a decision is stored and looked up under, most specific first: with the path form, then
    with any path form ("any"), so what worked on a node shape is tried first on a property shape too, then with any
    value kind as well (the component and the shape's datatype or class role alone: the back-off the repairer reads
    last, for a violation of a known component on a kind of value it has not repaired before)."""
    exact = abstract_signature(v, shapes)
    comp, _, kind, role = exact.split("|")
    return [exact, f"{comp}|any|{kind}|{role}", f"{comp}|any|any|{role}"]


def path_form(text: str) -> str:
    """The outermost form of a path text made by path_text."""
    if text == "-":
        return "none"
    if text.startswith("<") and text.endswith(">"):
        return "predicate"
    if text.startswith("^"):
        return "inverse"
    marks = {"*": "zeroOrMore", "+": "oneOrMore", "?": "zeroOrOne"}
    if text.endswith(tuple(marks)) and text.startswith("("):
        return marks[text[-1]]
    return "alternative" if "|" in text and "/" not in text else "sequence"


_TARGETS = (SH.targetNode, SH.targetClass, SH.targetSubjectsOf, SH.targetObjectsOf, SH.target)


class NestedChecks:
    """Checks of one node against one shape alone, every other target of the shapes graph ignored, counted (`count`).

    Args:
        shapes: the shapes graph every check reads (its copy without targets is made on the first check).
    """

    def __init__(self, shapes: Graph) -> None:
        """No check run yet."""
        self.shapes, self.count = shapes, 0
        self._ready: tuple[Graph, shacl.Prepared, set] | None = None  # made on the first check

    def violations(self, data: Graph, node, shape) -> list[Violation]:
        """Violations of `node` against `shape` alone in `data`, over the shapes without their targets prepared once
        (harvested by pySHACL on the first check, not on every one): pySHACL's evaluation of that one shape with
        `node` as its focus. Shapes with SHACL-AF rules or functions, which pySHACL applies before any shape, and a
        shape only a target would make one (not harvested there) take a whole run, `shape` given a temporary target.
        The shapes already ran whole (a nested check follows a verification), so their faults were reported there."""
        self.count += 1
        if self._ready is None:
            untargeted = _untargeted(self.shapes)
            prepared = shacl.prepare(untargeted)
            self._ready = untargeted, prepared, {s.node for s in prepared.shapes.shapes}
        untargeted, prepared, harvested = self._ready
        reused = shape in harvested  # else a shape only a target makes one: pySHACL harvests it per run
        if reused and not prepared.rules:
            return violations_of(shacl.validate_node(data, prepared, node, shape, advanced=True)[1])
        s, t = prepared.shapes.graph if reused else untargeted, (shape, SH.targetNode, node)
        s.add(t)
        try:
            report = shacl.validate_prepared(data, prepared, advanced=True)[1] if reused else _validate(data, s)
        finally:
            s.remove(t)
        return violations_of(report)


def _untargeted(shapes: Graph) -> Graph:
    """A copy of a shapes graph without targets (explicit, and implicit class targets)."""
    out = Graph()
    for t in shapes:
        if t[1] in _TARGETS or (t[1] == RDF.type and t[2] in (RDFS.Class, OWL.Class)):
            continue
        out.add(t)
    return out
