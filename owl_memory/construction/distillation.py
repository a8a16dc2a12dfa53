"""What an agentic sprint leaves in memory, as the symbolic sprint does: each repair the agent applied that cleared
its violation and still holds becomes a compiled RepairOperator (repair's own compiling, with its Episode); on
success each CQ the agent answered becomes a compiled answer, and the run an Episode; the run itself is recorded
with PROV-O (an om:Run, its trajectory, its judgment, the memory items it used)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from rdflib import Literal
from rdflib.namespace import OWL, RDF

from ..compiled import SPRINT_TASK
from ..model import ItemSpec
from ..model.judgments import Judgment
from ..provenance import RunInfo, provenance_graph
from .compiled_answers import store_answers


@dataclass(frozen=True)
class RunRecord:
    """What provenance needs of the agent's run.

    Args:
        run_id: the runner's run id (also on every trajectory line).
        model, condition: the LM's name and the memory condition.
        started, ended: wall-clock times.
        task: the task text the model was given.
        trace_ref: the trajectory's blob key, when stored.
        used: ids of memory items the run used (tools, injection, compiled operators applied), in order.
    """

    run_id: str
    model: str
    condition: str
    started: datetime
    ended: datetime
    task: str
    trace_ref: str | None
    used: tuple[str, ...] = ()


def distill(session, run: RunRecord, succeeded: bool, summary: dict) -> tuple[list[str], str | None]:
    """Compile what verified into memory and record the run; (ids of new compiled operators, the Episode id or
    None). Nothing is written without a memory."""
    memory = session.memory
    if memory is None:
        return [], None
    new = compile_repairs(session, run)
    episode = None
    if succeeded:
        store_answers(memory, session.ws, session.sprint.name, session.sprint.cqs, session.results,
                      attributed(session), run.run_id)
        episode = memory.add(_episode(session, run, summary))
    reason = f"{sum(r.passed for r in session.results)}/{len(session.results)} competency questions pass; the " \
             f"graph {'conforms' if succeeded else 'is not done'}"
    info = RunInfo(run.run_id, run.model, run.condition, run.started, run.ended, _ontology(session),
                   session.sprint.name, run.task, run.trace_ref,
                   tuple((item, rank, 0.0) for rank, item in enumerate(run.used, 1)))
    memory.write_graph(provenance_graph(info, Judgment(succeeded, reason, "high", "cq+shacl")))
    return new, episode


def compile_repairs(session, run: RunRecord) -> list[str]:
    """Compile each repair that cleared its violation, was not undone and whose signature is not violated at the
    end (the repair session's compiling, derived from the run's trajectory); the ids of new operators."""
    view = session.view()
    if view is None or not session.repair_session.worked:
        return []
    source = run.trace_ref or next(iter(session.applied))
    return session.repair_session.compile(run.run_id, source, {v.signature for v in view.violations})


def attributed(session) -> dict:
    """CQ id -> the deltas (not undone) that hold its answer: the triples reachable in the graph's additions from
    what the delta that made it pass added, so a rerun's replay of one CQ brings what its nodes needed to conform."""
    ws = session.ws
    net = set(ws.working) - set(ws.base)
    live = [d for key, d in session.applied.items() if key not in session.undone]
    added = {d.ref.key: set(ws.delta_triples(d)[0]) for d in live}
    out = {}
    for cq_id, key in session.flips.items():
        if key not in added:
            continue
        triples = _reachable(net, {t[0] for t in added[key] if t in net})
        out[cq_id] = [d for d in live if added[d.ref.key] & triples]
    return out


def _reachable(net: set, nodes: set) -> set:
    """The triples of `net` whose subject is reachable from `nodes` through `net`'s own links."""
    nodes, found = set(nodes), set[tuple]()
    while True:
        more = {t for t in net if t[0] in nodes} - found
        if not more:
            return found
        found |= more
        nodes |= {t[2] for t in more if not isinstance(t[2], Literal)}


def _episode(session, run: RunRecord, summary: dict) -> ItemSpec:
    """The run as an Episode: what it built, with provenance to the run and its trajectory."""
    name, counts = session.sprint.name, session.counts
    content = json.dumps({"run": run.run_id, "sprint": name, "summary": summary}, sort_keys=True, default=str)
    return ItemSpec("Episode", f"Agent built sprint {name}",
                    f"An agent made {len(session.results)} competency questions pass and the graph conform with "
                    f"{counts.deltas_applied} deltas and {counts.verify_runs} verify runs.", content,
                    applies_to=tuple(_ontologies(session)), task_types=(SPRINT_TASK,), tags=(name, "agentic"),
                    provenance={"run": run.run_id, **({"derived_from": run.trace_ref} if run.trace_ref else {})})


def _ontologies(session) -> list[str]:
    """The IRIs of the ontologies the seed declares."""
    return sorted(str(o) for o in session.ws.base.subjects(RDF.type, OWL.Ontology))


def _ontology(session) -> str | None:
    """The first ontology IRI the seed declares, or None."""
    found = _ontologies(session)
    return found[0] if found else None
