"""The TEXT2SPARQL Challenge's metric, as its evaluator (PyPI `text2sparql-client` 2.1, with pytrec_eval) computes it.

A query's result becomes a set of values: for a SELECT, the `value` text of every binding of every variable of the
head (IRIs, literals and blank-node labels alike: no datatype, no language tag, duplicates once); for an ASK, the
one value "true" with relevance 1 when the ASK answers true and 0 when it answers false. Relevance counts only in the
reference (a relevance-0 value is not relevant, so a reference ASK answering false has no relevant value and every
answer to it scores 0); in an answer the value "true" is retrieved whatever its ASK answered (trec_eval reads a
run's score as a rank, not as relevance), so any ASK answer to a question whose reference ASK answers true scores 1.
A query that fails on the endpoint counts as an empty result (the evaluator does the same).

Per question: set_P = |answer ∩ relevant| / |answer|, set_recall = |answer ∩ relevant| / |relevant|, set_F their
harmonic mean, each 0 when its denominator is; the average is over every question, an unanswered one counting 0.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..agent import QueryResult
from ..model.judgments import SetScores

ASK_VALUE = "true"


def answer_values(result: QueryResult | None) -> frozenset[str]:
    """The values an answer's result retrieves: every bound value of a SELECT, {"true"} for any ASK, none for
    None (a query that did not run)."""
    if result is None:
        return frozenset()
    if result.ask is not None:
        return frozenset({ASK_VALUE})
    return frozenset(text for row in result.rows for cell in row if cell is not None for text in (cell[1],))


def reference_values(result: QueryResult | None) -> frozenset[str]:
    """The relevant values of a reference's result: every bound value of a SELECT, {"true"} for an ASK answering
    true, none for one answering false (relevance 0) or a reference that did not run."""
    if result is not None and result.ask is False:
        return frozenset()
    return answer_values(result)


def set_scores(answer: Iterable[str], relevant: Iterable[str]) -> SetScores:
    """set_P, set_recall and set_F of answer values against relevant values (0 where a denominator is 0)."""
    got, gold = set(answer), set(relevant)
    hit = len(got & gold)
    precision = hit / len(got) if got else 0.0
    recall = hit / len(gold) if gold else 0.0
    f = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return SetScores(precision, recall, f)
