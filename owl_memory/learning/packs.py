"""Memory packs: JSONL files of items (one per line) to ship, diff and re-import; import is idempotent.

A line: {"memory_id", "kind", "title", "summary", "content", "tags", "scope", "refines", "applies_to",
"task_types", "failure_modes", "priority", "confidence", "signature", "action_schema", "verification_hook",
"provenance": {"source": "pack" | "extracted" | "human", "pack": NAME, "run": ..., "derived_from": ...,
"exported_in": the name of the pack the export wrote}}.
`memory_id` is the stable id (checked on import). Imported items carry the tags `source:pack` and `pack:NAME`,
so exports can filter by source. Packs shipped inside the package are importable by name ("starter").
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InvalidItem, LoadError
from ..model import Item, ItemSpec
from ..rdfio import check_output, write_text
from ..vocab import ITEM

if TYPE_CHECKING:
    from ..store import Memory

PACKS = Path(__file__).parent / "packs"
SOURCES = ("pack", "extracted", "human")
_ITEMS = """PREFIX om: <http://w3id.org/owl-memory#>
SELECT ?i WHERE { ?i om:contentRef ?c FILTER NOT EXISTS { ?i om:archived true } } ORDER BY ?i
LIMIT 1000 OFFSET %d"""
PAGE = 1000
_FIELDS = ("kind", "title", "summary", "content", "tags", "scope", "refines", "applies_to", "task_types",
           "failure_modes", "priority", "confidence", "signature", "action_schema", "verification_hook",
           "about_classes", "about_properties")


@dataclass(frozen=True)
class ImportReport:
    """What one pack import did: ids added and ids already stored (skipped)."""

    pack: str
    added: tuple[str, ...]
    skipped: tuple[str, ...]
    replaced: tuple[tuple[str, str], ...] = ()  # (original, the edited item that supersedes it)

    def to_dict(self) -> dict:
        """JSON-compatible form."""
        return {"pack": self.pack, "added": list(self.added), "skipped": list(self.skipped),
                "replaced": [{"original": o, "by": n} for o, n in self.replaced]}


def shipped_packs() -> list[str]:
    """Names of the packs shipped inside the package."""
    return sorted(p.stem for p in PACKS.glob("*.jsonl"))


def pack_path(name_or_path: str | Path) -> Path:
    """A pack file: an existing path, or the name of a shipped pack; LoadError lists the shipped ones."""
    p = Path(name_or_path)
    if p.is_file():
        return p
    if (PACKS / f"{name_or_path}.jsonl").is_file():
        return PACKS / f"{name_or_path}.jsonl"
    raise LoadError(f"no pack file or shipped pack named {str(name_or_path)[:80]!r}; shipped packs: "
                    f"{', '.join(shipped_packs())}", source=str(name_or_path))


def read_pack(path: Path, name: str, check_ids: bool = True) -> list[ItemSpec]:
    """The items of a pack file, checked line by line (LoadError names the line; with `check_ids`, also a line whose
    memory_id is not its item's stable id)."""
    return [spec for spec, _ in _lines(path, name, check_ids)]


def _lines(path: Path, name: str, check_ids: bool) -> list[tuple[ItemSpec, str | None]]:
    """Each line's item and the memory_id it names (None when it names none)."""
    return [_line(text, name, path, n, check_ids) for n, text in
            enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if text.strip()]


def _line(text: str, name: str, path: Path, n: int, check_ids: bool = True) -> tuple[ItemSpec, str | None]:
    """One pack line as an ItemSpec tagged with its pack, and its memory_id; with `check_ids` the memory_id must be
    its stable id."""
    try:
        d = _json(text)
        if not isinstance(d, dict):
            raise InvalidItem("a pack line is a JSON object")
        fields = _fields(d)
        tags = tuple(dict.fromkeys([*fields.pop("tags", ()), "source:pack", f"pack:{name}"[:64]]))
        spec = ItemSpec(**fields, tags=tags)
    except (json.JSONDecodeError, InvalidItem, TypeError) as e:
        raise LoadError(f"not a valid pack item: {str(e)[:200]}", source=str(path), line=n) from e
    named = d.get("memory_id")
    if check_ids and named not in (None, spec.id):
        raise LoadError(f"memory_id {str(named)[:20]!r} is not the item's stable id {spec.id} (was the title, content "
                        "or scope edited? import with --replace to supersede the original, or drop memory_id)",
                        source=str(path), line=n)
    return spec, named if isinstance(named, str) else None


def _fields(line: dict) -> dict:
    """The ItemSpec fields a pack line sets."""
    return {k: line[k] for k in _FIELDS if line.get(k) is not None}


def _json(text: str) -> object:
    """One line's JSON; InvalidItem when it nests deeper than Python's stack (json recurses per level)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise InvalidItem("nested deeper than Python's recursion limit; a pack item is a flat JSON object") from None


def import_pack(memory: Memory, name_or_path: str | Path, replace: bool = False) -> ImportReport:
    """Import a pack (path or shipped name): new items are added in one checked batch, stored ones skipped. With
    `replace`, a line whose memory_id names a stored item but is no longer its stable id (an edited export) is
    added and supersedes that item (kept, never retrieved again; the new one derives from it)."""
    path = pack_path(name_or_path)
    name = path.stem
    lines = _lines(path, name, check_ids=not replace)
    edited = {spec.id: old for spec, old in lines if old is not None and old != spec.id}
    originals = memory.stored(set(edited.values()))
    specs = [_derived(spec, edited[spec.id]) if edited.get(spec.id) in originals else spec for spec, _ in lines]
    stored = memory.stored({s.id for s in specs})
    memory.add_many([s for s in specs if s.id not in stored])
    replaced = tuple((edited[s.id], s.id) for s in specs if s.id not in stored and edited.get(s.id) in originals)
    for old, new in replaced:
        memory.supersede(old, new)
    return ImportReport(name, tuple(s.id for s in specs if s.id not in stored), tuple(sorted(stored)), replaced)


def _derived(spec: ItemSpec, original: str) -> ItemSpec:
    """The edited item, its provenance deriving it from the stored original it replaces."""
    return dataclasses.replace(spec, provenance={**(spec.provenance or {}), "derived_from": str(ITEM[original])})


def export_pack(memory: Memory, out: str | Path, *, kind: str | None = None, source: str | None = None,
                min_confidence: float = 0.0, curate: bool = False) -> int:
    """Write the memory's active items (filtered) as a pack; returns how many lines were written. `out` is checked
    before any work (rdfio.check_output) and written atomically. With `curate`, each line carries its curation
    (learning/curation.py: generalization score and flags) under "curation"."""
    if source is not None and source not in SOURCES:
        raise InvalidItem(f"source must be one of {', '.join(SOURCES)}, got {source!r}")
    check_output(out)
    lines = []
    for i in _active_ids(memory):
        item = memory.get(i)
        if (kind and item.kind.lower() != kind.lower()) or item.confidence < min_confidence:
            continue
        line = _export_line(memory, item)
        line["provenance"]["exported_in"] = Path(out).stem  # the pack this line belongs to, named by its file
        if source is None or line["provenance"]["source"] == source:
            lines.append(json.dumps(line, ensure_ascii=False, sort_keys=True))
    if curate:
        from .curation import curate as curated

        parsed = [json.loads(x) for x in lines]
        specs = [ItemSpec(**_fields(d)) for d in parsed]
        lines = [json.dumps({**d, "curation": c.to_dict()}, ensure_ascii=False, sort_keys=True)
                 for d, c in zip(parsed, curated(specs), strict=True)]
    write_text("".join(x + "\n" for x in lines), out)
    return len(lines)


def _active_ids(memory: Memory) -> list[str]:
    """Ids of every active item, paged through SPARQL."""
    ids: list[str] = []
    while True:
        rows = memory.sparql(_ITEMS % len(ids), limit=PAGE).rows
        ids += [row[0].rsplit("/", 1)[-1] for row in rows]
        if len(rows) < PAGE:
            return ids


def _export_line(memory: Memory, item: Item) -> dict:
    """One pack line for a stored item (its whole content read window by window)."""
    content = _content(memory, item)
    tags = [t for t in item.tags if t not in ("source:pack", "source:human") and not t.startswith("pack:")]
    pack = next((t[5:] for t in item.tags if t.startswith("pack:")), None)
    source = "pack" if pack else "human" if "source:human" in item.tags or not item.runs else "extracted"
    return {"memory_id": item.id, "kind": item.kind, "title": item.title, "summary": item.summary,
            "content": content, "tags": tags, "scope": item.scope, "refines": (item.refines or [None])[0],
            "applies_to": item.applies_to, "task_types": item.task_types,
            "failure_modes": item.failure_modes, "priority": item.priority, "confidence": item.confidence,
            "signature": item.signature,
            "action_schema": item.action_schema.to_json() if item.action_schema is not None else None,
            "verification_hook": item.verification_hook,
            **{k: v for k, v in (("about_classes", item.about_classes), ("about_properties", item.about_properties))
               if v},
            "provenance": {"source": source, **({"pack": pack} if pack else {}),
                           **({"run": item.runs[0]} if item.runs else {}),
                           **({"derived_from": item.derived_from[0]} if item.derived_from else {})}}


def _content(memory: Memory, item: Item) -> str:
    """An item's whole content, read through capped windows."""
    parts, start = [], 0
    while start < item.size:
        w = memory.window(item.id, start, memory.max_read)
        parts.append(w.text)
        start = w.end
        if not w.text:
            break
    return "".join(parts)
