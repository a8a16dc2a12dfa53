"""The export is one OWL 2 DL ontology with a stable IRI: checked by the OWLAPI and HermiT inside owlready2's jar."""

import os
import shutil
import subprocess
from pathlib import Path

import owlready2
import pytest
from rdflib import Graph, URIRef
from rdflib.namespace import OWL, RDF

from owl_memory import ItemSpec, Memory
from owl_memory.store.export import EXPORT_IRI

HERMIT_JAR = Path(owlready2.__file__).parent / "hermit" / "HermiT.jar"
CHECK_SOURCE = Path(__file__).parent / "java" / "OwlCheck.java"
BAD_DL = """@prefix : <http://example.org/x#> . @prefix owl: <http://www.w3.org/2002/07/owl#> .
<http://example.org/x> a owl:Ontology . :p a owl:ObjectProperty . :a :p "a literal" ."""
INCONSISTENT = """@prefix : <http://example.org/y#> . @prefix owl: <http://www.w3.org/2002/07/owl#> .
<http://example.org/y> a owl:Ontology . :A a owl:Class . :B a owl:Class ; owl:disjointWith :A . :i a :A , :B ."""


@pytest.fixture(scope="module")
def owlcheck(tmp_path_factory):
    """A function: RDF file -> {"iri", "version", "ontology": [...], "violation": [...], "consistent"} from Java."""
    if shutil.which("javac") is None or shutil.which("java") is None:
        if os.environ.get("OWL_MEMORY_REQUIRE_DATA") == "1":  # CI: .ci/run installs a JDK, so this must run
            pytest.fail("OWL_MEMORY_REQUIRE_DATA=1 but no JDK (javac, java) is installed")
        pytest.skip("a JDK (javac, java) is needed to compile the OWLAPI check")
    out = tmp_path_factory.mktemp("owlcheck")
    subprocess.run(["javac", "-nowarn", "-cp", str(HERMIT_JAR), "-d", str(out), str(CHECK_SOURCE)], check=True,
                   capture_output=True, timeout=120)

    def run(path: Path) -> dict:
        """Load `path` with the OWLAPI; its id, ontologies, DL profile violations and consistency."""
        proc = subprocess.run(["java", "-cp", f"{HERMIT_JAR}:{out}", "OwlCheck", str(path)], capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        report: dict = {"ontology": [], "violation": []}
        for line in proc.stdout.splitlines():
            key, value = line.split("\t", 1)
            report[key].append(value) if isinstance(report.get(key), list) else report.__setitem__(key, value)
        return report

    return run


def full_memory(path: Path) -> Memory:
    """A memory with every kind, links, exceptions, provenance, a superseded item and compiled fields."""
    m = Memory(path)
    episode = m.add(ItemSpec("Episode", "Run on PROV-O", "Use as evidence of what happened.", "episode log",
                             provenance={"run": "run-1", "derived_from": "sha256:" + "a" * 64}))
    ids = {}
    for kind in ("Principle", "Procedure", "AntiPattern", "Constraint", "JudgeRule", "EndpointProfile"):
        ids[kind] = m.add(ItemSpec(kind, f"{kind} about binding values", f"Use when a {kind} is needed.",
                                   f"{kind} payload", applies_to=("http://www.w3.org/ns/prov#",),
                                   task_types=("sparql query",), failure_modes=("injection",), tags=("t1",),
                                   grounded_by=(episode,)))
    m.add(ItemSpec("RepairOperator", "Repair minCount by default", "Use for missing values.", '{"op": "x"}',
                   signature="sh:MinCountConstraintComponent|ex:p|literal",
                   action_schema={"operator": "add_default", "params": {"path": "ex:p"}},
                   verification_hook="ASK { ?s ?p ?o }"))
    general = m.add(ItemSpec("Principle", "General binding rule", "Use when a query takes text.", "general"))
    m.add(ItemSpec("Principle", "Narrower binding rule", "Use when the value is an IRI.", "exception payload",
                   scope="exception", refines=general))
    newer = m.add(ItemSpec("Procedure", "Newer binding procedure", "Use instead of the older one.", "v2"))
    m.supersede(ids["Procedure"], newer)
    m.record_use(ids["Principle"], True)
    return m


def test_export_is_one_dl_ontology_the_owlapi_names(tmp_path, owlcheck):
    """The OWLAPI loads the export as EXPORT_IRI with its version IRI, one ontology, no DL violation, consistent."""
    with full_memory(tmp_path / "m") as m:
        path = m.export(tmp_path / "memory.owl", format="xml")
    report = owlcheck(path)
    assert report["iri"] == str(EXPORT_IRI)
    assert report["version"].startswith(f"{EXPORT_IRI}/") and len(report["version"]) == len(str(EXPORT_IRI)) + 17
    assert report["ontology"] == [f"OntologyID(OntologyIRI(<{EXPORT_IRI}>) VersionIRI(<{report['version']}>))"]
    assert report["violation"] == []
    assert report["consistent"] == "true"
    assert int(report["axioms"]) > 150  # the memory ontology and the items, not just a header


def test_the_check_can_fail(tmp_path, owlcheck):
    """Controls: a DL violation is reported, an inconsistent ontology is called inconsistent."""
    (tmp_path / "bad.ttl").write_text(BAD_DL)
    (tmp_path / "inc.ttl").write_text(INCONSISTENT)
    assert owlcheck(tmp_path / "bad.ttl")["violation"]
    assert owlcheck(tmp_path / "inc.ttl")["consistent"] == "false"


def test_one_header_and_a_version_iri_that_tracks_content(tmp_path):
    """Exactly one owl:Ontology; the same memory exports under the same version IRI, a change gives a new one."""
    with full_memory(tmp_path / "m") as m:
        first = Graph().parse(m.export(tmp_path / "a.ttl"))
        again = Graph().parse(m.export(tmp_path / "b.ttl"))
        m.record_use(m.search("binding", kinds=["Constraint"])[0].id, False)
        changed = Graph().parse(m.export(tmp_path / "c.ttl"))
    assert list(first.subjects(RDF.type, OWL.Ontology)) == [EXPORT_IRI]
    versions = [g.value(EXPORT_IRI, OWL.versionIRI) for g in (first, again, changed)]
    assert versions[0] == versions[1] != versions[2]
    assert (URIRef("http://anonymous"), None, None) not in first
