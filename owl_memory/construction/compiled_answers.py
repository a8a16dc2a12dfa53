"""Compiled CQ answers: what a finished sprint stores per competency question it solved, and how the next sprint
with the same memory reads it back.

A sprint that ends with every CQ passing and a conforming graph stores, per CQ it solved, a RepairOperator keyed by
the CQ's signature (`cq:<hash of the query>`) whose action schema points to the delta (a blob handle) that answered
it; the next sprint applies those deltas by computation first.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from rdflib.namespace import OWL, RDF

from .. import compiled
from ..errors import UnknownItem
from ..model import CqAnswer, Item, sha256
from .cq import CompetencyQuestion, CQResult, passed
from .sprint_file import slug
from .workspace import Delta, Workspace, nt_lines, parse_lines

if TYPE_CHECKING:
    from ..store import Memory


def cq_signature(cq: CompetencyQuestion) -> str:
    """The signature a compiled answer to a CQ is stored under: cq:<16 hex of query, prefixes and expectation>."""
    text = json.dumps([" ".join(cq.query.split()), sorted(cq.prefixes.items()), cq.expected, cq.bindings],
                      sort_keys=True, default=str)
    return "cq:" + sha256(text)[:16]


def stored_answer(memory: Memory, cq: CompetencyQuestion) -> tuple[Item, list, list] | None:
    """The compiled answer of a CQ with the triples it adds and removes; None when there is none or its delta
    handle is missing or unreadable (then the failed use is recorded)."""
    op = compiled.cq_answer(memory, cq_signature(cq))
    change = answer_delta(memory, op) if op is not None else None
    return None if op is None or change is None else (op, *change)


def answer_delta(memory: Memory, op: Item) -> tuple[list, list] | None:
    """The triples a compiled answer adds and removes (from its delta handle); None, and a recorded failure, when
    the handle is missing or unreadable."""
    answer = op.action_schema
    assert isinstance(answer, CqAnswer)  # compiled.cq_answer gives only items whose action schema is a CQ answer
    try:
        payload = json.loads(memory.blobs.load(answer.delta))
        return list(parse_lines(payload["added"])), list(parse_lines(payload["removed"]))
    except (UnknownItem, KeyError, ValueError, TypeError):
        memory.record_use(op.id, False)
        return None


def store_answers(memory: Memory, ws: Workspace, sprint_name: str, cqs: list, results: list[CQResult], solved: dict,
                  run_id: str) -> int:
    """Store one RepairOperator per CQ that passed with deltas of this run behind it (`solved`: CQ id -> deltas);
    returns how many are new."""
    applies_to = sorted(str(o) for o in ws.base.subjects(RDF.type, OWL.Ontology))
    return sum(_store(memory, ws, sprint_name, cq, solved[cq.id], applies_to, run_id)
               for cq in cqs if solved.get(cq.id) and passed(results, cq.id))


def _store(memory: Memory, ws: Workspace, sprint_name: str, cq: CompetencyQuestion, deltas: list[Delta],
           applies_to: list, run_id: str) -> int:
    """Store the compiled answer of one CQ (the net triples its deltas added); 1 when it was not stored before."""
    added: set = set()
    for d in deltas:
        a, r = ws.delta_triples(d)
        added = (added - set(r)) | set(a)
    lines = nt_lines(t for t in added if t in ws.working)
    payload = json.dumps({"added": lines, "removed": [], "cq": cq.id, "signature": cq_signature(cq)},
                         sort_keys=True)
    ref = memory.blobs.put(payload, kind="delta")
    new = compiled.store_cq_answer(
        memory, signature=cq_signature(cq), title=f"Answer competency question {slug(cq.id)}",
        summary=f"Use when competency question {cq.id} fails on a {sprint_name} graph: "
                f"adds the {len(lines)} triples that made it pass and conform.",
        payload=payload, answer=CqAnswer(ref.key, len(lines)), applies_to=applies_to,
        tags=(sprint_name, cq.id), query=cq.query, run_id=run_id)
    return int(new)
