"""Judge rules on TEXT2SPARQL CK25: compiled from the train split's reference queries, judging the held-out split's
questions they bind, against the challenge's own verdicts on the shared systems' answers.

Rules are compiled (owl_memory.learning.judge_rules.compile_rule) from each train question and its reference
query over the CK25 graph (prod-vocab.ttl and prod-inst.ttl, read locally). A held-out question is covered when a
rule binds it (learning/binding.py; CK25 questions name people and things by pv:name, learning/mentions.py). For
each covered question and each system of the answers folder, the system's query runs over the same graph and the
rule judges its result terms (as the rule judge judges an answer); the verdict is compared with the challenge's
own: set_F = 1 in the system's ck25_eval.json. Every held-out question is listed with why it is not covered.
Run: python benchmarks/judge_rules_ck25.py [--data DIR] [--seed N] (DIR: the text2sparql-ck25 folder, default
$OWL_MEMORY_DATA/text2sparql-ck25).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from rdflib import Graph, Literal, URIRef

from owl_memory.adapters import sparql as sparql_text
from owl_memory.adapters.sparql_binding import bind_terms
from owl_memory.errors import QueryFailed
from owl_memory.learning.binding import bind
from owl_memory.learning.curriculum import load_curriculum
from owl_memory.learning.judge_rules import compile_rule
from owl_memory.learning.judging import judge_terms
from owl_memory.learning.mentions import Reader
from owl_memory.model.judgments import Expect


def terms_of(graph: Graph, query) -> set | None:
    """The terms of a query's answer over the graph (an ASK's truth as a literal); None when it does not run."""
    try:
        result = sparql_text.evaluate(graph, query)
    except (QueryFailed, sparql_text.QuerySyntaxError, ValueError):
        return None
    if result.kind == "ASK":
        return {Literal(bool(result.ask))}
    return {t for row in result.rows for t in row if t is not None}


def shown(terms: set) -> str:
    """Terms as an answer names them: IRIs in angle brackets, literals quoted."""
    return ", ".join(sorted(f"<{t}>" if isinstance(t, URIRef) else f'"{t}"' for t in terms)) or "none"


def main(argv=None) -> int:
    """Compile the train split's rules, judge the held-out split's bound questions, print the figures as JSON."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("OWL_MEMORY_DATA", ".")) / "text2sparql-ck25")
    ap.add_argument("--seed", type=int, default=0, help="the questions file's split seed")
    args = ap.parse_args(argv)
    course = load_curriculum(args.data / "questions.yml", seed=args.seed)
    graph = Graph()
    for name in ("prod-vocab.ttl", "prod-inst.ttl"):
        graph.parse(args.data / name)
    reader = Reader(graph)
    rules, not_compiled = [], []
    for task in course.train:
        form = sparql_text.form(sparql_text.parse(task.expect.gold))
        rule = compile_rule(task.query, Expect("ask" if form == "ASK" else "sparql", task.expect.gold), graph, reader)
        (rules.append(rule) if rule else not_compiled.append(task.id))
    systems = sorted(p for p in args.data.joinpath("answers").iterdir() if p.is_dir())
    answers = {s.name: {a["qname"]: a["query"] for a in json.loads((s / "ck25_answers.json").read_text())}
               for s in systems}
    official = {s.name: json.loads((s / "ck25_eval.json").read_text()) for s in systems}
    rows, judged, agreed = [], 0, 0
    for task in course.holdout:
        bound = next(((r, b) for r in rules if (b := bind(r, task.query, reader))), None)
        if bound is None:
            rows.append({"id": task.id, "question": task.query, "covered": False})
            continue
        rule, b = bound
        want = terms_of(graph, bind_terms(sparql_text.parse(rule.template), b.bindings))
        verdicts = {}
        for system in answers:
            got = terms_of(graph, answers[system].get(task.id, "")) if task.id in answers[system] else None
            ruled = want is not None and got is not None and judge_terms(shown(got), want, graph, task.query).success
            truth = official[system].get(task.id, {}).get("set_F") == 1.0
            verdicts[system] = {"rule": ruled, "official": truth}
            judged, agreed = judged + 1, agreed + (ruled == truth)
        rows.append({"id": task.id, "question": task.query, "covered": True, "how": b.explanation,
                     "verdicts": verdicts})
    covered = sum(r["covered"] for r in rows)
    print(json.dumps({"train": len(course.train), "rules": len(rules), "train_without_rule": len(not_compiled),
                      "holdout": len(rows), "covered": covered, "judged": judged, "agreed": agreed,
                      "agreement": round(agreed / judged, 4) if judged else None}))
    for row in rows:
        print(json.dumps(row))
    print(json.dumps({"rule_forms": sorted(r.question for r in rules)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
