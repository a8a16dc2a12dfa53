"""Items proposed from outside extraction: a person's hint about a run (`owl-memory reflect`), and the agent's
memory notes (memory_note events) as refinement candidates. A note of a run judged a success on an
advice item becomes an item that refines it (its kind, applicability and the note as summary and content) with the
run's provenance, and goes to consolidation with the run's other extracted items, which accepts, merges or rejects
it like any other; notes of a failed run, on other kinds, or copying the task's own strings are reported and
dropped. The agent proposes; it never edits an item."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model import Event, ItemSpec, MemoryNote, RunStart
from ..model.judgments import Judgment
from .extraction import RunRecord, copies_task, forbidden_strings

if TYPE_CHECKING:
    from ..store import Memory

ADVICE = ("Principle", "Procedure", "AntiPattern", "Constraint")  # kinds a note may refine
MAX_NOTES = 3  # notes of one run that can become items
TITLE_WORDS = 10  # the memory shapes' bound on a title


def note_specs(memory: Memory, record: RunRecord, judgment: Judgment) -> tuple[list[ItemSpec], list[str]]:
    """The items a run's notes propose, and why each other note was dropped."""
    notes = [e for e in record.events if isinstance(e, MemoryNote)]
    if not judgment.success:
        return [], [f"note on {n.item} dropped: the run was not judged a success" for n in notes]
    specs: list[ItemSpec] = []
    dropped: list[str] = [f"note on {n.item} dropped: at most {MAX_NOTES} notes a run" for n in notes[MAX_NOTES:]]
    forbidden = forbidden_strings(record)
    for note in notes[:MAX_NOTES]:
        target = memory.get(note.item)
        if target.kind not in ADVICE:
            dropped.append(f"note on {note.item} dropped: notes refine {', '.join(ADVICE)} items, not {target.kind}")
            continue
        title = " ".join(f"Refined: {target.title}".split()[:TITLE_WORDS])[:120]
        prov = {"run": record.run_id, **({"derived_from": record.trace_ref} if record.trace_ref else {})}
        spec = ItemSpec(target.kind, title, note.note, note.note, applies_to=target.applies_to,
                        task_types=target.task_types, failure_modes=target.failure_modes, refines=target.id,
                        confidence=target.confidence, provenance=prov)
        copied = copies_task(spec, forbidden, record.task)
        if copied:
            dropped.append(f"note on {note.item} dropped: it copies a task-specific string ({copied})")
            continue
        specs.append(spec)
    return specs, dropped


def reflected(events: list[Event], hint: str, kind: str = "Principle", title: str | None = None) -> ItemSpec:
    """An item from a person's hint about a run: the hint as summary and content, applying to the run's ontology,
    its provenance the run, tagged source:human (a person said it; pack exports say so)."""
    start = next((e for e in events if isinstance(e, RunStart)), None)
    text = " ".join(hint.split())
    name = " ".join((title or text).split()[:TITLE_WORDS])[:120]
    return ItemSpec(kind, name, text[:400], text, applies_to=start.ontology.iris if start and start.ontology else (),
                    tags=("source:human",), provenance={"run": events[0].run_id} if events else None)
