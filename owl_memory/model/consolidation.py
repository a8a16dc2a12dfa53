"""What consolidation did with one run's items (learning/consolidation.py fills a `Report`), and its counts as
`ConsolidationFigures` (the per-run figures `owl-memory train` prints and sums)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields


@dataclass(frozen=True)
class ConsolidationFigures:
    """How many items consolidation added, found already stored, merged away, linked as conflicts, stored as
    exceptions, rejected, and archived by the memory's bound (one run's, or summed over runs with +)."""

    added: int = 0
    duplicates: int = 0
    merged: int = 0
    conflicts: int = 0
    exceptions: int = 0
    rejected: int = 0
    archived: int = 0

    def __add__(self, other: ConsolidationFigures) -> ConsolidationFigures:
        """Field-by-field sum (totals over a training's runs)."""
        return ConsolidationFigures(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})

    def to_dict(self) -> dict[str, int]:
        """JSON form: field name -> count, in field order."""
        return asdict(self)


@dataclass
class Report:
    """What consolidation did with one run's items (ids in each list; filled as consolidation goes, so mutable).

    Its fields are those of ConsolidationFigures, in the same order: `counts()` pairs them by name.
    """

    added: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    merged: list[list[str]] = field(default_factory=list)  # [stored, new]: the new one archived, unless it is better
    conflicts: list[list[str]] = field(default_factory=list)  # [new, stored]
    exceptions: list[list[str]] = field(default_factory=list)  # [exception, general rule]
    rejected: list[str] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)  # forgotten by the bound

    def to_dict(self) -> dict[str, list]:
        """JSON-compatible form."""
        return {f.name: list(getattr(self, f.name)) for f in fields(self)}

    def counts(self) -> ConsolidationFigures:
        """Per-field counts (the per-run consolidation figures)."""
        return ConsolidationFigures(**{f.name: len(getattr(self, f.name)) for f in fields(self)})
