"""The repair benchmark's sets: W3C SHACL Core test manifests, SHACL-SPARQL (DASH) test cases, mutation sets."""

from __future__ import annotations

from pathlib import Path

from rdflib import Graph, Literal, Namespace, URIRef
from rdflib.collection import Collection

from owl_memory.vocab import RDF, SH

from .cases import Case, closure, without
from .mutation_sets import PER_KIND, REALWORLD, SHIPPED, mutation_cases, shapes_file

MF = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#")
SHT = Namespace("http://www.w3.org/ns/shacl-test#")
DASH = Namespace("http://datashapes.org/dash#")
SUITES = {"w3c": "shacl-w3c-core", "sparql": "shacl-sparql"}  # folders of the data folder


def load_set(spec: str, data: Path | None, per_kind: int = PER_KIND) -> list[Case]:
    """The non-conforming cases of a set: "w3c", "w3c:<folder>" (e.g. w3c:node), "sparql", "cases:DIR" (a folder of
    Turtle files, each one case holding its data and shapes), "dash:DIR" or "manifests:DIR" (a folder of DASH test
    cases or W3C test manifests, anywhere), or a mutation set:
    "shapes:PATH" (any shapes file), "dcat", "datacube", "fabric" (shapes files in the data folder), "sprint" or
    "construction:<library|clinic|fleet|museum>" (shapes files in the repo); a mutation set with ":multi" appended
    (e.g. dcat:multi, shapes:my.ttl:multi) holds graphs broken by several independent edits each. SystemExit with
    the fix for an unknown set (the benchmark's command line names sets)."""
    base, multi = spec.removesuffix(":multi"), spec.endswith(":multi")
    if base.startswith("cases:") and not multi:
        return folder_cases(Path(base.removeprefix("cases:")).expanduser())
    kind, _, where = base.partition(":")
    if kind in FOLDER_SUITES and where and not multi:
        return [c for c in folder_suite(kind, Path(where).expanduser()) if c.expected_conforms is False]
    named = shapes_file(base, data)
    if named is not None:
        return mutation_cases(*named, per_kind, multi)
    name, _, folder = base.partition(":")
    if name not in SUITES or multi:
        raise SystemExit(f"unknown set {spec!r}: use shapes:PATH, cases:DIR, dash:DIR, manifests:DIR or one of "
                         f"{', '.join([*SUITES, *REALWORLD, *SHIPPED, 'brick'])} (w3c takes :<folder>; a mutation set "
                         "takes :multi)")
    return [c for c in suite_cases(name, folder, data) if c.expected_conforms is False]


def folder_cases(folder: Path) -> list[Case]:
    """Every Turtle file of `folder` as a case holding its data and shapes (its name: folder/file stem), sorted;
    SystemExit naming the folder when it holds none."""
    files = sorted(folder.glob("*.ttl")) if folder.is_dir() else []
    if not files:
        raise SystemExit(f"no .ttl case files in {folder}: give a folder of Turtle files, each holding data and shapes")
    cases = []
    for path in files:
        g = Graph().parse(path, format="turtle")
        cases.append(Case(f"{folder.name}/{path.stem}", g, g, same_file=True))
    return cases


FOLDER_SUITES = ("dash", "manifests")  # test files in a folder of one's own: DASH test cases, W3C manifests


def folder_suite(kind: str, root: Path) -> list[Case]:
    """Every case of a folder of test files (searched recursively, sorted): "dash" DASH GraphValidationTestCase files
    (*.test.ttl), "manifests" W3C test manifests, whatever result each expects; SystemExit naming the folder when it
    holds none (e.g. pySHACL's source distribution carries both: test/resources/dash_tests, sht_tests)."""
    found = sorted(root.rglob("*.test.ttl")) if kind == "dash" else case_files(root) if root.is_dir() else []
    if not found:
        raise SystemExit(f"no {kind} test files in {root}: give a folder holding "
                         f"{'DASH *.test.ttl files' if kind == 'dash' else 'W3C test manifests (mf:Manifest)'}")
    return [dash_case(p) for p in found] if kind == "dash" else [w3c_case(p) for p in found]


def suite_cases(name: str, folder: str, data: Path) -> list[Case]:
    """Every case of a suite ("w3c" or "sparql") under its folder (all of it when `folder` is empty), sorted by file,
    whatever result it expects."""
    root = data / SUITES[name] / folder if folder else data / SUITES[name]
    if name == "sparql":
        return [dash_case(p) for p in sorted(root.rglob("*.ttl"))]
    return [w3c_case(p) for p in case_files(root)]


def load_case(suite: str, name: str, data: Path) -> Case:
    """One case of a suite ("w3c" or "sparql") by its name ("node/class-001", "shacl-sparql/node-sparql-001.test")."""
    root = data / SUITES[suite]
    folder, stem = name.split("/")
    path = (root if folder == root.name else root / folder) / f"{stem}.ttl"
    return dash_case(path) if suite == "sparql" else w3c_case(path)


def case_files(root: Path) -> list[Path]:
    """Every W3C test manifest file under `root` that lists test entries (an mf:Manifest with mf:entries; an index
    manifest that only includes others is no case), sorted."""
    return sorted(p for p in root.rglob("*.ttl") if {"mf:Manifest", "mf:entries"} <= _words(p))


def _words(path: Path) -> set:
    """The manifest terms a Turtle file's text names (mf:Manifest, mf:entries)."""
    text = path.read_text(encoding="utf-8")
    return {w for w in ("mf:Manifest", "mf:entries") if w in text}


def dash_case(path: Path) -> Case:
    """A DASH GraphValidationTestCase file -> a case; data and shapes are the file minus the test case entity."""
    g = Graph().parse(path, format="turtle", publicID=path.resolve().as_uri())
    tests = set(g.subjects(RDF.type, DASH.GraphValidationTestCase))
    stripped = without(g, closure(g, tests))
    expected = next((g.value(r, SH.conforms) for t in tests for r in g.objects(t, DASH.expectedResult)), None)
    return Case(f"{path.parent.name}/{path.stem}", stripped, stripped, _expected(expected), same_file=True)


def w3c_case(path: Path) -> Case:
    """A manifest file -> a case (data and shapes from the file itself or its siblings); the manifest is excluded."""
    g = Graph().parse(path, format="turtle", publicID=path.resolve().as_uri())
    stripped = without(g, _manifest_closure(g))
    entry = next(iter(_entries(g)))
    action, result = g.value(entry, MF.action), g.value(entry, MF.result)
    missing: list[str] = []
    data = _graph_at(g.value(action, SHT.dataGraph), path, stripped, missing)
    shapes = _graph_at(g.value(action, SHT.shapesGraph), path, stripped, missing)
    return Case(f"{path.parent.name}/{path.stem}", data, shapes, _expected(g.value(result, SH.conforms)),
                tuple(missing), same_file=data is shapes)


def _expected(value) -> bool | None:
    """The sh:conforms a case expects, None when it states none."""
    return bool(value.toPython()) if isinstance(value, Literal) else None


def _entries(g: Graph):
    """The test entries of every manifest in `g`."""
    for m in g.subjects(RDF.type, MF.Manifest):
        for lst in g.objects(m, MF.entries):
            yield from Collection(g, lst)


def _manifest_closure(g: Graph) -> set:
    """Manifests, entries and the blank nodes only they reach (lists, actions, expected reports), to exclude."""
    return closure(g, set(g.subjects(RDF.type, MF.Manifest)) | set(_entries(g)))


def _graph_at(iri, path: Path, stripped: Graph, missing: list) -> Graph:
    """The graph an action names: the file itself (manifest excluded), a sibling file, or empty when absent."""
    if iri is None or URIRef(iri) == URIRef(path.resolve().as_uri()):
        return stripped
    other = path.parent / Path(str(iri)).name
    if not other.exists():
        missing.append(other.name)
        return Graph()
    return Graph().parse(other, format="turtle", publicID=other.resolve().as_uri())
