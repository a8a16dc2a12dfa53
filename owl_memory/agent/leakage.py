"""Leakage measured from what the LM actually received: payload characters found in the sent messages.

Method: every k-character substring (k-gram, k=16 by default) of a payload is indexed; each message the LM
received (system messages aside) is scanned, and positions covered by a payload k-gram form leaked segments.
Segments are mapped back onto the payload (greedy longest match) and the union of payload positions they cover
is the count of distinct payload characters that reached the model. Verbatim copies of at least k characters
are counted exactly; shorter fragments, and text the model saw only in escaped form (repr of newlines), are not.
k-grams that also occur in the instructions (system messages) or in texts passed as `allowed` (the task) are
not counted, so boilerplate shared with the prompt does not inflate the number; the runner passes the IRIs and
namespaces its tools showed as `allowed` too (ontology vocabulary is metadata; literals in results are payload).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..model import LmCall

K = 16


def _messages(calls: Iterable[LmCall]) -> list[tuple[str, str]]:
    """(role, text) of every message the calls sent."""
    return [m for c in calls for m in c.messages]


def kgrams(text: str, k: int = K) -> set[str]:
    """Every k-character substring of `text`."""
    return {text[i:i + k] for i in range(len(text) - k + 1)}


def covered_segments(text: str, grams: set[str], k: int = K) -> list[str]:
    """Maximal substrings of `text` covered by k-grams in `grams`."""
    segments, start, end = [], None, -1
    for i in range(len(text) - k + 1):
        if text[i:i + k] in grams:
            if start is None or i > end:
                if start is not None:
                    segments.append(text[start:end])
                start = i
            end = i + k
    if start is not None:
        segments.append(text[start:end])
    return segments


def payload_spans(segment: str, payload: str, k: int = K) -> list[tuple[int, int]]:
    """Payload intervals a leaked segment copies, by greedy longest match from its left end."""
    spans, i = [], 0
    while i + k <= len(segment):
        pos = payload.find(segment[i:i + k])
        if pos < 0:
            i += 1
            continue
        j = _extend(segment, payload, i, pos)
        while j < len(segment) and (nxt := payload.find(segment[i:j + 1], pos + 1)) >= 0:
            pos, j = nxt, _extend(segment, payload, i, nxt)
        spans.append((pos, pos + j - i))
        i = j
    return spans


def _extend(segment: str, payload: str, i: int, pos: int) -> int:
    """End (in segment) of the match of segment[i:] against payload[pos:]."""
    j, p = i, pos
    while j < len(segment) and p < len(payload) and payload[p] == segment[j]:
        j, p = j + 1, p + 1
    return j


def union_length(spans: Iterable[tuple[int, int]]) -> int:
    """Characters covered by a set of half-open intervals."""
    total, reach = 0, -1
    for a, b in sorted(spans):
        a = max(a, reach)
        if b > a:
            total, reach = total + b - a, b
    return total


def measure(calls: Iterable[LmCall], payloads: dict[str, str] | Iterable[tuple[str, str]],
            allowed: Iterable[str] = (), k: int = K) -> dict:
    """Leakage of named payloads into the messages of LM calls: distinct characters, characters sent (with
    repeats), per name."""
    messages = _messages(calls)
    shown = [t for role, t in messages if role not in ("system", "developer")]
    excluded = set().union(*(kgrams(t, k) for role, t in messages if role in ("system", "developer")),
                           *(kgrams(t, k) for t in allowed))
    items = payloads.items() if isinstance(payloads, dict) else payloads
    by_name: dict[str, int] = {}
    sent = 0
    for name, payload in items:
        distinct, chars = _measure_one(shown, payload, excluded, k)
        by_name[name] = by_name.get(name, 0) + distinct
        sent += chars
    return {"payload_chars_in_history": sum(by_name.values()), "payload_chars_sent": sent,
            "payload_chars_by_source": by_name}


def _measure_one(texts: list[str], payload: str, excluded: set[str], k: int) -> tuple[int, int]:
    """(distinct payload characters, covered message characters) for one payload over the shown texts."""
    grams = kgrams(payload, k) - excluded
    if not grams:
        return 0, 0
    spans, sent, seen = [], 0, {}
    for text in texts:
        if text not in seen:
            seen[text] = covered_segments(text, grams, k)
        for segment in seen[text]:
            sent += len(segment)
            spans.extend(payload_spans(segment, payload, k))
    return union_length(spans), sent


def bait_hits(calls: Iterable[LmCall], baits: Iterable[str]) -> dict[str, int]:
    """How many times each bait string occurs in the non-system messages the LM received."""
    shown = [t for role, t in _messages(calls) if role not in ("system", "developer")]
    return {b: sum(t.count(b) for t in shown) for b in baits}
