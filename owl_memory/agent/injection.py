"""What a condition puts into the task up front: A1's retrieved items as text, A3's packed hint (model.MemoryAccess
says which, and how many items)."""

from __future__ import annotations

import json

from ..model import Hit, Item, MemoryAccess
from ..vocab import OWL, RDF
from .tools import clip

BULLETS, BULLET_CHARS = 3, 160  # A1: bullets per injected item, characters per bullet


def retrieve(memory, task: str, graph, access: MemoryAccess) -> list[Hit]:
    """The top `access.injected` applicable items for the task, ontology-scoped first ([] when none are injected)."""
    if memory is None or access.injected < 1:
        return []
    iris = [str(s) for s in graph.subjects(RDF.type, OWL.Ontology)] if graph is not None else []
    hits = memory.search(text=task, ontology=iris[0], k=access.injected) if iris else []
    return hits or memory.search(text=task, k=access.injected)


def memory_text(memory, injected: list[Hit], access: MemoryAccess) -> str:
    """What the task gets appended: A1 each item's title, summary and <= 3 bullets; A3 the packed hint."""
    if injected and access.hint_chars:
        return "\n\nMemory hint: " + hint(memory.get(injected[0].id), access.hint_chars)
    if not injected or not access.text:
        return ""
    blocks = []
    for i in injected:
        bullets = _bullets(memory.blobs.load(memory.get(i.id).content_ref))
        blocks.append(f"- [{i.kind}] {clip(i.title, 80)}: {clip(i.summary, 200)} (id {i.id})" +
                      "".join(f"\n  * {b}" for b in bullets))
    return "\n\nRelevant memory:\n" + "\n".join(blocks)


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
