"""The bounded bank: a documented usefulness score, and which items to archive when a memory is over its bound.

usefulness = (success_count + 1) / (success_count + failure_count + 2)   Laplace-smoothed success ratio, 0.5 unknown
           + 0.05 * ln(1 + use_count)                                    items that get used are kept
           - 0.002 * age_in_days                                         old items drift down, slowly
Ties break by age (older first), then by id. Only active items (not archived, not superseded) count toward the
bound and are candidates; archiving is reversible (`Memory.restore`), nothing is deleted.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..errors import ConfigError
from ..model import UseCounts

CONFIG = "config.json"
MAX_SCAN = 1_000_000
ACTIVE = """PREFIX om: <http://w3id.org/owl-memory#>
SELECT ?i ?u ?s ?f ?c WHERE {
  ?i om:useCount ?u ; om:successCount ?s ; om:failureCount ?f ; om:createdAt ?c .
  FILTER NOT EXISTS { ?i om:archived true } FILTER NOT EXISTS { ?x om:supersedes ?i }
}"""


@dataclass(frozen=True)
class Candidate:
    """An active item the bound may archive: its id, counters and creation time."""

    id: str
    counts: UseCounts
    created_at: str


def usefulness(use_count: int, success_count: int, failure_count: int, age_days: float) -> float:
    """The usefulness score of one item (higher is more useful); see the module docstring."""
    ratio = (success_count + 1) / (success_count + failure_count + 2)
    return round(ratio + 0.05 * math.log1p(use_count) - 0.002 * max(0.0, age_days), 6)


def age_days(created_at: str, now: datetime | None = None) -> float:
    """Days since an item's createdAt (0 when unknown)."""
    try:
        when = datetime.fromisoformat(str(created_at))
    except ValueError:
        return 0.0
    when = when if when.tzinfo else when.replace(tzinfo=timezone.utc)
    return ((now or datetime.now(timezone.utc)) - when).total_seconds() / 86_400


def least_useful(candidates: list[Candidate], n: int) -> list[str]:
    """Ids of the `n` least useful items among `candidates`."""
    def key(c: Candidate) -> tuple[float, str, str]:
        """Least useful first, then older, then by id."""
        u = c.counts
        return usefulness(u.use_count, u.success_count, u.failure_count, age_days(c.created_at)), c.created_at, c.id

    return [c.id for c in sorted(candidates, key=key)[: max(0, n)]]


def read_bound(folder: Path) -> int | None:
    """The max_items a memory directory was given (None: unbounded)."""
    f = Path(folder) / CONFIG
    return json.loads(f.read_text(encoding="utf-8")).get("max_items") if f.is_file() else None


def write_bound(folder: Path, max_items: int | None) -> None:
    """Persist a memory's max_items so every later writer respects it."""
    if max_items is not None and (not isinstance(max_items, int) or max_items < 1):
        raise ConfigError(f"max_items must be a positive integer, got {max_items!r}")
    f = Path(folder) / CONFIG
    data = json.loads(f.read_text(encoding="utf-8")) if f.is_file() else {}
    data["max_items"] = max_items
    f.write_text(json.dumps(data, indent=1), encoding="utf-8")
