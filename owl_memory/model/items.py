"""Memory items as typed values: `ItemSpec` (what a caller stores), `Item` (a stored item as read), `Card` / `Hit`
(what a search shows) and `UseCounts` (an item's utility counters)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import asdict, dataclass, field, fields
from functools import cached_property

from ..errors import InvalidItem
from ..vocab import KINDS
from .handles import sha256
from .operators import CompiledOperator, operator_from_json

_TUPLES = ("applies_to", "task_types", "failure_modes", "tags", "grounded_by", "about_classes", "about_properties")
_WHEN_SET = ("about_classes", "about_properties", "carried_over_from")  # card keys shown only with a value
# Characters that make text display as something other than what it is (Unicode TR #36, CVE-2021-42574): every
# default-ignorable code point (Unicode's DerivedCoreProperties: soft hyphen, combining grapheme joiner, Hangul and
# Mongolian fillers, variation selectors, zero-width characters, the tag block U+E0000-E0FFF) and every format
# character (category Cf: bidirectional marks, embeddings, overrides and isolates, interlinear annotations, Arabic
# and Egyptian format signs), and the line and paragraph separators. shapes/owl-memory-shapes.ttl refuses the same
# class (written out there, checked equal by tests/test_visible_text.py) in titles, summaries and tags, so every write
# path and backend enforces it; `check_visible` names the one found.
INVISIBLE_CLASS = (r"\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u115f-\u1160\u17b4-\u17b5"
                   r"\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
                   r"\ufff0-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
                   r"\U0001d173-\U0001d17a\U000e0000-\U000e0fff")
INVISIBLE = re.compile(f"[{INVISIBLE_CLASS}]")


def item_id(title: str, content: str, scope: str = "general") -> str:
    """Stable id: first 16 hex of sha256 over normalized title, content and scope."""
    norm_title = " ".join(unicodedata.normalize("NFC", title).split()).casefold()
    norm_content = "\n".join(ln.rstrip() for ln in unicodedata.normalize("NFC", content).strip().splitlines())
    raw = "\x1f".join((norm_title, norm_content, scope.strip().lower()))
    return sha256(raw)[:16]


def normalize_kind(name: str) -> str:
    """The ontology class name of a kind given in any case ('antipattern' -> 'AntiPattern')."""
    by_lower = {k.lower(): k for k in KINDS}
    key = str(name).replace("_", "").replace("-", "").replace(" ", "").lower()
    if key not in by_lower:
        raise InvalidItem(f"unknown kind {str(name)[:40]!r}; use one of {', '.join(KINDS)}")
    return by_lower[key]


@dataclass(frozen=True)
class ItemSpec:
    """What a caller wants stored as one memory item; normalized on construction (InvalidItem on bad fields).

    Args:
        kind: one of vocab.KINDS, any case ("antipattern" -> "AntiPattern").
        title, summary, content: the item's title (1-10 words), its "use when" line and its payload text.
        applies_to: ontology IRIs; task_types / failure_modes: names (slugged into IRIs); tags: free words.
        priority, confidence, scope: ranking fields; scope "exception" needs `refines`.
        refines: id of the general item this one narrows.
        provenance: {"run": run id, "derived_from": "sha256:..." key or IRI}.
        signature, verification_hook: the compiled operator's key and the check that must pass after it.
        action_schema: the compiled operator (model.operators; a dict or JSON text of one is parsed).
        grounded_by: ids of the Episodes this item was learned from.
        about_classes, about_properties: IRIs of the ontology classes and properties the item is about.
    """

    kind: str
    title: str
    summary: str
    content: str
    applies_to: tuple[str, ...] = ()
    task_types: tuple[str, ...] = ()
    failure_modes: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    priority: int = 0
    confidence: float = 0.5
    scope: str = "general"
    refines: str | None = None
    provenance: dict | None = field(default=None, hash=False)
    signature: str | None = None
    action_schema: CompiledOperator | None = field(default=None, hash=False)
    verification_hook: str | None = None
    grounded_by: tuple[str, ...] = ()
    about_classes: tuple[str, ...] = ()
    about_properties: tuple[str, ...] = ()

    def __post_init__(self):
        """Coerce fields to their types: kind name, strings, tuples of strings, numbers, a typed operator."""
        put = object.__setattr__
        put(self, "kind", normalize_kind(self.kind))
        for name in ("title", "summary", "content", "scope"):
            put(self, name, str(getattr(self, name)))
        for name in _TUPLES:
            put(self, name, tuple(_strings(getattr(self, name))))
        try:
            put(self, "priority", int(self.priority))
            put(self, "confidence", float(self.confidence))
        except (TypeError, ValueError) as e:
            raise InvalidItem(f"priority must be an integer and confidence a number in [0, 1] ({e})") from e
        put(self, "action_schema", operator_from_json(self.action_schema))
        for name, text in (("title", self.title), ("summary", self.summary), *(("tag", t) for t in self.tags)):
            check_visible(name, text)

    @cached_property
    def id(self) -> str:
        """The stable id this item gets: item_id(title, content, scope), computed once per spec (its fields are
        frozen)."""
        return item_id(self.title, self.content, self.scope)

    def to_dict(self) -> dict:
        """JSON-compatible form (tuples as lists, the operator as its JSON); from_dict(to_dict()) == self."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["action_schema"] = None if self.action_schema is None else self.action_schema.to_json()
        return {k: list(v) if isinstance(v, tuple) else v for k, v in out.items()}

    @classmethod
    def from_dict(cls, d: dict) -> ItemSpec:
        """An ItemSpec from its dict form; InvalidItem names unknown or missing fields."""
        known = {f.name for f in fields(cls)}
        extra = sorted(set(d) - known)
        if extra:
            raise InvalidItem(f"unknown item fields {extra}; use {sorted(known)}")
        try:
            return cls(**d)
        except TypeError as e:
            raise InvalidItem(f"an item needs kind, title, summary and content ({e})") from e


@dataclass(frozen=True)
class Card:
    """What a search shows of an item: its id, kind, title, summary, applicability, ranking fields, conflicts and the
    ontology classes and properties it is about."""

    id: str
    kind: str
    title: str
    summary: str
    applies_to: tuple[str, ...]
    priority: int
    confidence: float
    conflicts_with: tuple[str, ...]
    about_classes: tuple[str, ...] = ()
    about_properties: tuple[str, ...] = ()

    def card(self) -> dict:
        """The card's own values by field name (a Hit or an Item is built from them)."""
        return {f.name: getattr(self, f.name) for f in fields(Card)}

    def to_dict(self) -> dict:
        """JSON-compatible form (tuples as lists); the about terms and the carried-over mark only when set (the
        search contract's keys stay the same for other items)."""
        return _plain({k: v for k, v in asdict(self).items() if k not in _WHEN_SET or v})


@dataclass(frozen=True)
class Hit(Card):
    """One search result: the item's card, its score (BM25 text rank, comparable only within one search: a word in
    half the items or more weighs FTS5's floor of 1e-6; 0.0 for a search without text) and, for an item
    found through an ontology's versions or alignments (store/alignment.py), the IRI it was carried over from."""

    score: float = 0.0
    carried_over_from: str | None = None


@dataclass(frozen=True)
class UseCounts:
    """An item's utility counters: uses, and those judged successes and failures."""

    use_count: int = 0
    success_count: int = 0
    failure_count: int = 0

    def to_dict(self) -> dict:
        """JSON-compatible form."""
        return asdict(self)


@dataclass(frozen=True)
class Item(Card):
    """A stored item as read: its card, links, counters, compiled fields and provenance; never its content text.

    Args:
        scope: "general" or "exception".
        task_types, failure_modes: slugs of its applicability links; tags: its tags.
        refines, supersedes, exceptions, grounded_by: ids of the items it links to.
        content_ref, content_hash, size: the handle of its content (read it with Memory.window) and its length.
        created_at: ISO timestamp.
        counts: utility counters (also as use_count, success_count, failure_count).
        signature, action_schema, verification_hook: compiled-operator fields (None when not compiled).
        runs, derived_from: PROV-O provenance (run IRIs, trajectory / source IRIs).
        archived: out of retrieval (kept with its links).
    """

    scope: str = "general"
    task_types: tuple[str, ...] = ()
    failure_modes: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    refines: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()
    exceptions: tuple[str, ...] = ()
    grounded_by: tuple[str, ...] = ()
    content_ref: str = ""
    content_hash: str = ""
    size: int = 0
    created_at: str = ""
    counts: UseCounts = UseCounts()
    signature: str | None = None
    action_schema: CompiledOperator | None = field(default=None, hash=False)
    verification_hook: str | None = None
    runs: tuple[str, ...] = ()
    derived_from: tuple[str, ...] = ()
    archived: bool = False

    @property
    def use_count(self) -> int:
        """Times the item was used."""
        return self.counts.use_count

    @property
    def success_count(self) -> int:
        """Uses judged a success."""
        return self.counts.success_count

    @property
    def failure_count(self) -> int:
        """Uses judged a failure."""
        return self.counts.failure_count

    @property
    def demoted(self) -> bool:
        """True when the item (a compiled operator) has failed more often than it has succeeded."""
        return self.failure_count > self.success_count

    def to_dict(self) -> dict:
        """JSON-compatible form: every field flat (counters, provenance as {run, derived_from}, operator as JSON)."""
        out = {}
        for f in fields(self):
            if f.name == "counts":
                out.update(self.counts.to_dict())
            elif f.name == "runs":
                out["provenance"] = {"run": list(self.runs), "derived_from": list(self.derived_from)}
            elif f.name != "derived_from":
                out[f.name] = getattr(self, f.name)
        out["action_schema"] = None if self.action_schema is None else self.action_schema.to_json()
        return _plain(out)


def best_first(items) -> list[Item]:
    """Compiled operators best first: by their smoothed success ratio ((successes + 1) / (uses + 2)), then id."""
    return sorted(items, key=lambda it: (-(it.success_count + 1) / (it.use_count + 2), it.id))


def check_visible(name: str, text: str) -> None:
    """InvalidItem naming the first character of a shown field that displays as something other than what it is
    (INVISIBLE), and where it is."""
    m = INVISIBLE.search(text)
    if m:
        char = m.group()
        raise InvalidItem(f"{name}: character U+{ord(char):04X} ({unicodedata.name(char, 'unnamed')}) at position "
                          f"{m.start()} makes the text display as something other than what it is; remove it")


def _plain(d: dict) -> dict:
    """A dict with tuple values as lists."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}


def _strings(values) -> list[str]:
    """A str or an iterable of str as a list of non-empty strings."""
    return [str(v) for v in ([values] if isinstance(values, str) else list(values or ())) if str(v).strip()]
