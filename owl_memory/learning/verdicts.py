"""Verdicts of a set comparison, shared by the judges that compare an answer's terms or values with a gold set
(judging.py over an ontology, endpoint_judge.py on an endpoint): precision, recall and the failure mode."""

from __future__ import annotations

from ..model.judgments import EMPTY_GOLD, Judgment

MAX_MISSING = 10


def compare_sets(found: set[str], gold: set[str], judge: str, empty: bool = False) -> Judgment:
    """The set verdict; a gold that names nothing judges only a task whose expected answer is nothing (`empty`),
    otherwise the run is judged no answer (EMPTY_GOLD)."""
    return set_verdict(found, gold, judge) if gold or empty else empty_gold(judge)


def set_verdict(found: set[str], gold: set[str], judge: str) -> Judgment:
    """Set comparison with precision and recall; success only when both are 1."""
    hit = found & gold
    precision = len(hit) / len(found) if found else (1.0 if not gold else 0.0)
    recall = len(hit) / len(gold) if gold else 1.0
    ok = precision == 1.0 and recall == 1.0
    missing = tuple(sorted(m.removeprefix("literal:") for m in gold - found))[:MAX_MISSING]
    reason = (f"precision {precision:.2f} ({len(hit)} of {len(found)} answer terms expected), recall {recall:.2f} "
              f"({len(hit)} of {len(gold)} expected terms given)")
    mode = "" if ok else "no-answer-terms" if not found else "extra-answer-terms" if precision < 1 else \
        "missing-answer-terms"
    return Judgment(ok, reason, "high", judge, missing, mode)


def empty_gold(judge: str) -> Judgment:
    """The verdict on a run whose gold returned no rows: no answer can be checked against it (EMPTY_GOLD)."""
    return Judgment(False, "the gold query returned no rows, so no answer can be checked against it (a typo in the "
                    "gold? fix it, or set expect.empty: true when no answer is the expected one); judged no answer, "
                    "and nothing is learned from this run", "low", judge, (), EMPTY_GOLD)
