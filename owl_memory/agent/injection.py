"""What a condition gives the model up front: A1's retrieved items as a "Relevant prior experience" block (its own
RLM input, `prior_experience`, bounded so its preview is seen whole), A3's packed hint appended to the task
(model.MemoryAccess says which, and how many items).

A1, the text baseline, retrieves by the task's text and its applicability. Candidates come from Memory.search in tiers,
most applicable first: (text, ontology, task type), (text, ontology), (ontology, task type), (text, task type), (text),
(ontology), where the ontology is the run's, or on endpoints without one each vocabulary their EndpointProfiles list
(learned endpoint items apply to it; the tiers run once per vocabulary); a tier that needs a value the run lacks is
skipped, and an item from a tier without the ontology is kept
only when it applies to any ontology or to this one (IRIs compared without a trailing # or /). Then the tiers with the
ontology run again following the versions and aligned terms the run's ontology declares (store/alignment.py): the items
carried over come after every exact one, marked. Each candidate has a polarity: `seed` when no run generated it (a pack,
a hand-written item), else `failure` for an AntiPattern and `success` for a Procedure, Principle or Constraint (other
kinds are never injected). The quota takes the top items of each polarity in candidate order (2 success + 1 failure + 1
seed by default), or the top N whatever their polarity. An item that a run of this very task generated or re-extracted,
or that supersedes such an item, is never injected: the run records it as filtered. The block is bounded: whole items
(title, polarity and kind, summary, <= 3 bullets) are added while they fit the L2 budget (at most 1,000 characters, the
RLM's preview of an input).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rdflib import Graph

from ..model import Hit, Item, MemoryAccess, OntologyContext, Quota
from ..model.runs import MAX_BUDGET, POLARITIES
from ..store import ontology_context
from ..vocab import ITEM, serves_ontology
from .tools.caps import clip

if TYPE_CHECKING:
    from ..store import Memory

BULLETS, BULLET_CHARS = 3, 120  # A1: bullets per injected item, characters per bullet
TITLE_CHARS, SUMMARY_CHARS = 80, 160  # A1: characters of an injected item's title and summary
FIELD = "prior_experience"  # the RLM input A1's block is given in
INJECTABLE = {"Procedure": "success", "Principle": "success", "Constraint": "success", "AntiPattern": "failure"}
TIERS = (("text", "ontology", "task_type"), ("text", "ontology"), ("ontology", "task_type"), ("text", "task_type"),
         ("text",), ("ontology",))
HEADING = "## Relevant prior experience"
ASSESS = "Before acting, briefly assess which of these items apply to your task and which do not."
LABELS = {"success": "what worked", "failure": "what failed", "seed": "seed advice"}
ORIGIN = """PREFIX om: <http://w3id.org/owl-memory#>
PREFIX prov: <http://www.w3.org/ns/prov#>
SELECT ?item ?source ?task WHERE {
  VALUES ?item { %s }
  ?item om:supersedes* ?source .
  { ?source prov:wasGeneratedBy ?run } UNION { ?run om:reextracted ?source }
  OPTIONAL { ?run om:taskId ?task }
}"""
_ID = re.compile(r"^[0-9a-f]{16}$")


@dataclass(frozen=True)
class Retrieval:
    """What a run was given up front: the injected hits in order, each one's polarity (A1), and the items left out
    because a run of the same task made them."""

    hits: tuple[Hit, ...] = ()
    polarity: dict[str, str] = field(default_factory=dict)
    filtered: tuple[str, ...] = ()


def retrieve(memory: Memory | None, task: str, graph: Graph | None, access: MemoryAccess, task_id: str | None = None,
             task_type: str | None = None, vocabularies: tuple[str, ...] = ()) -> Retrieval:
    """The items a condition injects for the task: A1's quota by text and applicability, A3's best item.

    A run without an ontology on endpoints passes the `vocabularies` (namespaces) their profiles list: A1's tiers
    with the ontology run once per vocabulary, in order, so items learned on those endpoints apply."""
    if memory is None or access.injected < 1:
        return Retrieval()
    context = ontology_context(graph)
    if not access.text:  # A3: the best item by text, ontology-scoped first
        hits = memory.search(text=task, k=access.injected, context=context) if context else []
        return Retrieval(tuple(hits or memory.search(text=task, k=access.injected)))
    scopes = (context.ontology,) if context else tuple(vocabularies) or (None,)
    candidates: list[Hit] = []
    for scope in scopes:
        found = _candidates(memory, {"text": task, "ontology": scope, "task_type": task_type}, access.injected,
                            context)
        candidates += [h for h in found if h.id not in {c.id for c in candidates}]
    origin = _origins(memory, [h.id for h in candidates])
    own = [h.id for h in candidates if task_id and task_id in origin.get(h.id, (False, set()))[1]]
    polarity = {h.id: p for h in candidates if h.id not in own and (p := _polarity(h, origin))}
    hits = _pick([h for h in candidates if h.id in polarity], polarity, access.quota)
    return Retrieval(tuple(hits), {h.id: polarity[h.id] for h in hits}, tuple(own))


def _candidates(memory: Memory, values: dict[str, str | None], wanted: int,
                context: OntologyContext | None = None) -> list[Hit]:
    """Injectable applicable items through the tiers, most applicable first, without repeats; then, through the
    tiers with the ontology again, the items carried over from its versions and aligned terms (store/alignment.py),
    so every exact item comes before every carried one."""
    depth, seen, out = min(50, 4 * wanted + 8), set(), []
    passes: list[tuple[tuple[str, ...], OntologyContext | None]] = [(tier, None) for tier in TIERS]
    passes += [(tier, context) for tier in TIERS if context and "ontology" in tier]
    for tier, follow in passes:
        if any(not values[name] for name in tier):
            continue
        found = memory.search(**{name: values[name] for name in tier}, kinds=list(INJECTABLE), k=depth,
                              context=follow)
        for h in found:
            scoped = "ontology" in tier or serves_ontology(h.applies_to, values["ontology"])
            if h.id not in seen and scoped:
                seen.add(h.id)
                out.append(h)
    return out


def _origins(memory: Memory, ids: list[str]) -> dict[str, tuple[bool, set[str]]]:
    """Per item: whether a run generated it, and the task ids of the runs behind it or the items it supersedes."""
    ids = [i for i in ids if _ID.match(i)]
    if not ids:
        return {}
    rows = memory.sparql(ORIGIN % " ".join(f"<{ITEM[i]}>" for i in ids), limit=10_000).rows
    out: dict[str, tuple[bool, set[str]]] = {}
    for item, source, task in rows:
        item_id = str(item).rsplit("/", 1)[-1]
        made, tasks = out.get(item_id, (False, set()))
        out[item_id] = (made or source == item, tasks | ({str(task)} if task is not None else set()))
    return out


def _polarity(hit: Hit, origin: dict[str, tuple[bool, set[str]]]) -> str | None:
    """seed (no run made it), failure (a learned AntiPattern), success (learned advice); None: never injected."""
    if not origin.get(hit.id, (False, set()))[0]:
        return "seed"
    return INJECTABLE.get(hit.kind)


def _pick(hits: list[Hit], polarity: dict[str, str], quota: Quota) -> list[Hit]:
    """The quota's items in candidate order: the top `overall`, or the top of each polarity."""
    if quota.overall is not None:
        return hits[:quota.overall]
    left = {p: getattr(quota, p) for p in POLARITIES}
    out = []
    for h in hits:
        if left[polarity[h.id]] > 0:
            left[polarity[h.id]] -= 1
            out.append(h)
    return out


def hint_text(memory: Memory | None, retrieval: Retrieval, access: MemoryAccess) -> tuple[str, list[Hit]]:
    """A3: the packed hint appended to the task, and the hit it shows ("" and [] for any other condition)."""
    if memory is None or not retrieval.hits or not access.hint_chars:
        return "", []
    return "\n\nMemory hint: " + hint(memory.get(retrieval.hits[0].id), access.hint_chars), list(retrieval.hits[:1])


def experience(memory: Memory | None, retrieval: Retrieval, access: MemoryAccess,
               budget: int | None = None) -> tuple[str, list[Hit]]:
    """A1: the "Relevant prior experience" block (whole items while they fit `budget` characters, at most
    MAX_BUDGET), and the hits it shows ("" and [] when there is nothing to show)."""
    if memory is None or not retrieval.hits or not access.text:
        return "", []
    shown: list[Hit] = []
    text, bound = f"{HEADING}\n{ASSESS}\n", min(budget or MAX_BUDGET, MAX_BUDGET)
    for h in retrieval.hits:
        block = _block(memory, len(shown) + 1, h, retrieval.polarity.get(h.id, "seed"))
        if len(text) + len(block) > bound:
            continue
        text, shown = text + block, shown + [h]
    return (text.rstrip() if shown else ""), shown


def _block(memory: Memory, n: int, hit: Hit, polarity: str) -> str:
    """One injected item: its title, polarity and kind, its summary and <= 3 bullets of its content."""
    bullets = _bullets(memory.blobs.load(memory.get(hit.id).content_ref))
    carried = ", carried over" if hit.carried_over_from else ""
    return (f"\n### {n}. {clip(hit.title, TITLE_CHARS)} ({LABELS[polarity]}, {hit.kind}{carried})\n"
            f"{clip(hit.summary, SUMMARY_CHARS)}\n" + "".join(f"* {b}\n" for b in bullets))


def hint(item: Item, chars: int) -> str:
    """A3's hint: the item's title and compiled action schema (compact JSON), at most `chars` characters."""
    schema = item.action_schema
    text = f"{item.title} (id {item.id})"
    if schema:
        text += " action: " + json.dumps(schema.to_json(), separators=(",", ":"), ensure_ascii=False)
    return clip(text, chars)


def _bullets(content: str) -> list[str]:
    """Up to BULLETS lines of an item's content (its bulleted lines when it has any), each clipped."""
    lines = [line.strip() for line in content.splitlines() if line.strip()]
    marked = [line.lstrip("-*• ").strip() for line in lines if line[:1] in "-*•"]
    return [clip(line, BULLET_CHARS) for line in (marked or lines)[:BULLETS]]
