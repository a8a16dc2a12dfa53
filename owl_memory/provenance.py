"""PROV-O provenance of one run, as RDF for `Memory.write_graph`.

- the run: `om:Run` (a prov:Activity) with om:model, om:condition, om:onOntology, om:curriculumId, om:taskId,
  om:taskText (clipped), om:iterations, om:converged (ended by SUBMIT before its iteration limit), om:answerHash
  (sha256 of the answer), om:constraintViolations (when its queries broke Constraint items), prov:startedAtTime /
  prov:endedAtTime, and om:reextracted for every stored item its extraction produced again (an exact duplicate: no
  new item, but the run made it too);
- its trajectory: `om:Trajectory` (a prov:Entity) named by the JSONL blob's key, om:payloadRef = that key,
  prov:wasGeneratedBy the run;
- its judgment: `om:Judgment` (a prov:Entity) with om:success, om:reason, om:judgmentConfidence, om:judge,
  om:missing, om:decidedByRule (each JudgeRule item that decided), prov:wasGeneratedBy the run,
  prov:wasDerivedFrom the trajectory;
- each memory item the run used: prov:used, and a qualified `prov:Usage` (prov:entity, om:rank, om:score);
- extracted items carry prov:wasGeneratedBy / prov:wasDerivedFrom themselves (ItemSpec.provenance).

Questions a researcher asks of it, as SPARQL for `Memory.sparql` (docs/ablations.md shows them):
FAILED_RUN_ITEMS (items used by runs that failed), UNTRACED_ITEMS (items that do not trace back to the run and the
trajectory that produced them: empty for a memory filled by the loop alone; items imported from packs or added by
hand are listed), ITEMS_BY_ITERATIONS (which items go with fewer iterations: the mean iterations of the runs that
used each item against the mean of all runs), USED_BUT_FAILING (items used often whose runs mostly failed) and
PRODUCTIVE_TASKS (which curriculum tasks made the items other tasks' runs used most).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from rdflib import Graph, Literal, URIRef
from rdflib.namespace import RDF, XSD

from .model.judgments import Judgment
from .store import run_iri, source_iri
from .vocab import ITEM, OM, PROV

TASK_CHARS = 400
FAILED_RUN_ITEMS = """PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX om: <http://w3id.org/owl-memory#>
SELECT ?item ?run ?rank ?reason WHERE {
  ?run a om:Run ; prov:qualifiedUsage ?u .
  ?u prov:entity ?item ; om:rank ?rank .
  ?j a om:Judgment ; prov:wasGeneratedBy ?run ; om:success false ; om:reason ?reason .
} ORDER BY ?run ?rank"""
UNTRACED_ITEMS = """PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX om: <http://w3id.org/owl-memory#>
SELECT ?item WHERE {
  ?item om:contentRef ?content .
  FILTER NOT EXISTS { ?item prov:wasGeneratedBy ?run ; prov:wasDerivedFrom ?trajectory .
                      ?run a om:Run . ?trajectory a om:Trajectory ; prov:wasGeneratedBy ?run }
} ORDER BY ?item"""
ITEMS_BY_ITERATIONS = """PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX om: <http://w3id.org/owl-memory#>
SELECT ?item (COUNT(DISTINCT ?run) AS ?runs) (AVG(?iterations) AS ?meanIterations)
       (AVG(?iterations) - MAX(?overall) AS ?difference) WHERE {
  ?run a om:Run ; prov:used ?item ; om:iterations ?iterations .
  { SELECT (AVG(?all) AS ?overall) WHERE { ?anyRun a om:Run ; om:iterations ?all } }
} GROUP BY ?item ORDER BY ?difference ?item"""
USED_BUT_FAILING = """PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX om: <http://w3id.org/owl-memory#>
SELECT ?item (COUNT(?run) AS ?uses) (SUM(IF(?success, 0, 1)) AS ?failures) WHERE {
  ?run a om:Run ; prov:used ?item .
  ?judgment a om:Judgment ; prov:wasGeneratedBy ?run ; om:success ?success .
} GROUP BY ?item HAVING (SUM(IF(?success, 0, 1)) * 2 > COUNT(?run)) ORDER BY DESC(?failures) DESC(?uses) ?item"""
PRODUCTIVE_TASKS = """PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX om: <http://w3id.org/owl-memory#>
SELECT ?curriculum ?task (COUNT(DISTINCT ?item) AS ?items) (COUNT(DISTINCT ?later) AS ?reuses) WHERE {
  ?item om:contentRef ?content ; prov:wasGeneratedBy ?made . ?made a om:Run ; om:taskId ?task .
  OPTIONAL { ?made om:curriculumId ?curriculum }
  OPTIONAL { ?later a om:Run ; prov:used ?item ; om:taskId ?other . FILTER(?other != ?task) }
} GROUP BY ?curriculum ?task ORDER BY DESC(?reuses) DESC(?items) ?task"""


@dataclass(frozen=True)
class RunInfo:
    """What provenance records about one run.

    Args:
        run_id: the run's id; model / condition: LM and ablation condition; ontology_iri: the task's ontology.
        task_id / task: the curriculum task id (if any) and its text; started / ended: wall-clock times.
        trace_ref: blob key of the trajectory JSONL; used: (item id, rank, score) per item the run used.
        curriculum_id: the curriculum the task belongs to; iterations, converged, answer_hash: how the run went.
        reextracted: ids of stored items the run's extraction produced again.
        constraint_violations: how many of its queries broke a Constraint item (om:constraintViolations).
    """

    run_id: str
    model: str
    condition: str
    started: datetime
    ended: datetime
    ontology_iri: str | None = None
    task_id: str | None = None
    task: str = ""
    trace_ref: str | None = None
    used: tuple[tuple[str, int, float], ...] = field(default_factory=tuple)
    curriculum_id: str | None = None
    iterations: int | None = None
    converged: bool | None = None
    answer_hash: str | None = None
    reextracted: tuple[str, ...] = ()
    constraint_violations: int = 0


def judgment_iri(run_id: str) -> URIRef:
    """The IRI of a run's judgment."""
    return URIRef(f"{run_iri(run_id)}/judgment")


def provenance_graph(info: RunInfo, judgment: Judgment | None) -> Graph:
    """The PROV-O triples of one run, its trajectory, its judgment and its qualified usages."""
    g, run = Graph(bind_namespaces="none"), run_iri(info.run_id)
    g.add((run, RDF.type, OM.Run))
    for p, v in ((OM.model, info.model), (OM.condition, info.condition), (OM.taskId, info.task_id),
                 (OM.taskText, info.task[:TASK_CHARS] if info.task else None), (OM.curriculumId, info.curriculum_id),
                 (OM.answerHash, info.answer_hash)):
        if v:
            g.add((run, p, Literal(str(v))))
    if info.iterations is not None:
        g.add((run, OM.iterations, Literal(int(info.iterations), datatype=XSD.nonNegativeInteger)))
    if info.constraint_violations:
        g.add((run, OM.constraintViolations, Literal(int(info.constraint_violations),
                                                     datatype=XSD.nonNegativeInteger)))
    if info.converged is not None:
        g.add((run, OM.converged, Literal(bool(info.converged), datatype=XSD.boolean)))
    for item in info.reextracted:
        g.add((run, OM.reextracted, ITEM[item]))
    g.add((run, PROV.startedAtTime, Literal(info.started.replace(microsecond=0), datatype=XSD.dateTime)))
    g.add((run, PROV.endedAtTime, Literal(info.ended.replace(microsecond=0), datatype=XSD.dateTime)))
    if info.ontology_iri:
        g.add((run, OM.onOntology, URIRef(info.ontology_iri)))
        g.add((URIRef(info.ontology_iri), RDF.type, OM.TargetOntology))
    trace = _trajectory(g, info, run)
    if judgment is not None:
        _judgment(g, info.run_id, run, trace, judgment)
    for item, rank, score in info.used:
        _usage(g, run, item, rank, score)
    return g


def _trajectory(g: Graph, info: RunInfo, run: URIRef) -> URIRef | None:
    """The trajectory entity (named by its blob key), generated by the run."""
    if not info.trace_ref:
        return None
    trace = source_iri(info.trace_ref)
    g.add((trace, RDF.type, OM.Trajectory))
    g.add((trace, OM.payloadRef, Literal(info.trace_ref)))
    g.add((trace, PROV.wasGeneratedBy, run))
    return trace


def _judgment(g: Graph, run_id: str, run: URIRef, trace: URIRef | None, j: Judgment) -> None:
    """The judgment entity of a run."""
    node = judgment_iri(run_id)
    g.add((node, RDF.type, OM.Judgment))
    g.add((node, PROV.wasGeneratedBy, run))
    if trace is not None:
        g.add((node, PROV.wasDerivedFrom, trace))
    g.add((node, OM.success, Literal(bool(j.success), datatype=XSD.boolean)))
    g.add((node, OM.reason, Literal(j.reason[:400] or "-")))
    g.add((node, OM.judgmentConfidence, Literal(j.confidence)))
    g.add((node, OM.judge, Literal(j.judge)))
    for m in j.missing:
        g.add((node, OM.missing, Literal(str(m)[:200])))
    for rule in j.rules:
        g.add((node, OM.decidedByRule, ITEM[rule]))


def _usage(g: Graph, run: URIRef, item: str, rank: int, score: float) -> None:
    """prov:used and a qualified prov:Usage with rank and score for one item the run used (one Usage per item:
    two searches can both rank different items first)."""
    u = URIRef(f"{run}/usage/{item}")
    g.add((run, PROV.used, ITEM[item]))
    g.add((run, PROV.qualifiedUsage, u))
    g.add((u, RDF.type, PROV.Usage))
    g.add((u, PROV.entity, ITEM[item]))
    g.add((u, OM.rank, Literal(int(rank), datatype=XSD.positiveInteger)))
    g.add((u, OM.score, Literal(float(score), datatype=XSD.double)))
