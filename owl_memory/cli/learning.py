"""Commands of the learning loop: train (a curriculum through the loop), pack (export / import), curriculum
(make one from ontologies) and score (a TEXT2SPARQL answers file, by the challenge's metric)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from ..agent import CONDITIONS
from .common import (
    EXIT_FAILED,
    EXIT_OK,
    Memory,
    corpus_options,
    emit,
    endpoint_map_option,
    interruptible,
    json_option,
    library_errors,
    lm_limits,
    lm_options,
    mapping,
    memory_option,
    table,
    warn_empty_gold,
)

if TYPE_CHECKING:
    from ..learning import ScoreReport
    from ..model import LearnedRules, TrainSummary


@click.command("train")
@click.argument("curriculum", type=click.Path(exists=True))
@lm_options
@lm_limits
@click.option("--split", type=click.Choice(["train", "holdout", "all"]), default="train", show_default=True)
@click.option("--condition", type=click.Choice(list(CONDITIONS)), default="A2", show_default=True)
@click.option("--max-iters", type=click.IntRange(min=1), default=12, show_default=True)
@click.option("--matts", help="parallel:K or sequential:K per task.")
@click.option("--max-extract", type=click.IntRange(min=0), help="Items one run stores at most (default 3; MaTTS 5).")
@click.option("--limit", type=click.IntRange(min=1), help="Run only the first N tasks of the split.")
@endpoint_map_option
@corpus_options
@memory_option
@json_option
@library_errors
@interruptible(lambda memory_path, **_: f"train interrupted; {memory_path} keeps what the tasks that finished stored, "
               "nothing of the task that was running (train again runs every task again)")
def train(curriculum: str, lm: str | None, api_base: str | None, sub_lm: str | None, max_tokens: int | None,
          timeout: float | None, split: str, condition: str, max_iters: int, matts: str | None, max_extract: int | None,
          limit: int | None, endpoint_map: tuple[str, ...], language: str, split_seed: int, memory_path: str,
          as_json: bool, max_output_chars: int | None) -> None:
    """Stream a curriculum's tasks through the learning loop (run, judge, extract, consolidate, store).

    CURRICULUM is a curriculum YAML, a TEXT2SPARQL questions file or a folder of SHACL SPARQL examples. Exit 0 when
    every task ran.

    Example: owl-memory train experiments/curricula/library.yaml --lm openai/gpt-4o-mini --memory .owl-memory
    """
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from ..agent import resolve_lm
    from ..learning import load_curriculum, map_endpoints, train_curriculum
    from ..model import RunConfig

    course, grants = map_endpoints(load_curriculum(curriculum, language, split_seed), endpoint_map)
    console = Console(stderr=True)
    model = resolve_lm(lm, api_base, max_tokens, timeout)
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=console,
                   disable=not console.is_terminal)
    with Memory(memory_path, writes=True) as m, bar:
        todo = bar.add_task(f"train {course.id}", total=None)
        config = RunConfig(lm=model, api_base=api_base, condition=condition, max_iters=max_iters, sub_lm=sub_lm,
                           max_tokens=max_tokens, timeout=timeout, endpoints=grants,
                           max_output_chars=max_output_chars or RunConfig.max_output_chars)
        summary = train_curriculum(course, m, config, split=split, matts=matts, limit=limit, max_extract=max_extract,
                                   progress=lambda done, total, line: bar.update(todo, completed=done, total=total,
                                                                                 description=line))
    emit(summary, as_json, _train_report)  # the TrainSummary as its to_dict(): JSON, or printed for people
    warn_empty_gold([(f"task {t.id}", t.judgment) for t in summary.tasks])
    sys.exit(EXIT_OK if not summary.errors else EXIT_FAILED)


def _train_report(summary: TrainSummary) -> None:
    """Print a training summary for people: one plain row per task (fits 80 columns; the judge or error last)."""
    rows = [(t.id, "error" if t.success is None else "yes" if t.success else "no", len(t.extracted),
             *(t.figures.to_dict().values() if t.judgment else ["-"] * len(TRAIN_FIGURES)),
             t.judgment.judge if t.judgment else t.error or "") for t in summary.tasks]
    table(("task", "ok", "ext", *TRAIN_FIGURES.values(), "judge"), rows, "no tasks ran")
    click.echo("ext: items extracted; consolidation: " + ", ".join(f"{short} {name}" for name, short in
                                                                   TRAIN_FIGURES.items()))
    scored = summary.set_scores
    click.echo(f"{summary.succeeded}/{summary.ran} succeeded" + (f" (set_P {scored.set_P:.3f}, set_recall "
               f"{scored.set_recall:.3f}, set_F {scored.set_F:.3f})" if scored else "") +
               f"; memory holds {summary.items} items")
    click.echo(_rule_line(summary.judge_rules))


def _rule_line(rules: LearnedRules) -> str:
    """The judge rules learned and their agreement with gold on the held-out tasks, in one line."""
    a, seen = rules.agreement, rules.in_training
    share = "n/a" if a.agreement is None else f"{a.agreement:.0%}"
    return (f"judge rules: {len(rules.learned)} learned, agreeing with gold on {seen.agreed} of the "
            f"{seen.judged} gold runs they judged; on held-out tasks they agree with gold on {share} of "
            f"{a.probes} probe answers, covering {a.covered}/{a.tasks} tasks ({a.covered_trained}/{a.trained_family} "
            "of those whose family was trained)")


TRAIN_FIGURES = {"added": "add", "duplicates": "dup", "merged": "mrg", "conflicts": "conf", "exceptions": "exc",
                 "rejected": "rej", "archived": "arch"}  # a consolidation report's fields, as short column names


@click.group("pack")
def pack() -> None:
    """Export and import memory packs (JSONL, one item per line; import is idempotent).

    Example: owl-memory pack import starter --memory .owl-memory
    """


@pack.command("export")
@click.argument("out")
@click.option("--kind", help="Only items of this kind.")
@click.option("--source", type=click.Choice(["pack", "extracted", "human"]), help="Only items from this source.")
@click.option("--min-confidence", type=click.FloatRange(0, 1), default=0.0, show_default=True)
@click.option("--curate", is_flag=True, help="Score each line's generalization and flag what would not transfer (as "
                                             "pack check does), under the line's \"curation\" key.")
@memory_option
@json_option
@library_errors
def pack_export(out: str, kind: str | None, source: str | None, min_confidence: float, curate: bool,
                memory_path: str, as_json: bool) -> None:
    """Write the memory's active items to OUT as a JSONL pack.

    Example: owl-memory pack export learned.jsonl --source extracted --min-confidence 0.6
    """
    from ..learning import export_pack

    with Memory(memory_path) as m:
        n = export_pack(m, out, kind=kind, source=source, min_confidence=min_confidence, curate=curate)
    emit({"path": str(out), "items": n}, as_json, mapping)


@pack.command("import")
@click.argument("pack_file")
@click.option("--replace", is_flag=True, help="A line whose memory_id names a stored item but no longer matches its "
                                              "content (an edited export) supersedes that item instead of being "
                                              "refused.")
@memory_option
@json_option
@library_errors
def pack_import(pack_file: str, replace: bool, memory_path: str, as_json: bool) -> None:
    """Import PACK_FILE (a JSONL path, or the name of a shipped pack such as "starter"); twice is the same as once.

    Example: owl-memory pack import edited.jsonl --replace --memory .owl-memory
    """
    from ..learning import import_pack

    with Memory(memory_path, writes=True) as m:
        report = import_pack(m, pack_file, replace=replace)
    emit(report, as_json, lambda r: click.echo(f"{r.pack}: {len(r.added)} added, {len(r.skipped)} skipped"
                                               + (f", {len(r.replaced)} replaced" if r.replaced else "")))


@pack.command("check")
@click.argument("pack_file")
@json_option
@library_errors
def pack_check(pack_file: str, as_json: bool) -> None:
    """Score each item of PACK_FILE for generalization and flag hard-coded IRIs, Procedures without steps, duplicate
    titles and near-duplicates (the rule: docs/agents.md). Exit 1 when any item is flagged.

    Example: owl-memory pack check starter
    """
    from ..learning import check_pack

    found = check_pack(pack_file)
    emit(found, as_json, lambda items: table(("id", "score", "title / flags"),
                                             [(c.id, f"{c.generalization:.2f}",
                                               c.title + "".join(f" [{f}]" for f in c.flags)) for c in items],
                                             "the pack is empty"))
    sys.exit(EXIT_FAILED if any(c.flags for c in found) else EXIT_OK)


@click.group("curriculum")
def curriculum() -> None:
    """Make curricula from ontologies: tasks with SPARQL gold, split for holdout checkpoints.

    Example: owl-memory curriculum make dcterms --tasks 200 --out dcterms.yaml
    """


@curriculum.command("make")
@click.argument("ontologies", nargs=-1, required=True)
@click.option("--families", default="", help="Comma-separated family or group names (groups: hierarchy, schema, "
              "annotation, count, axiom); default every family. An unknown name lists them all.")
@click.option("--split", default="entity", show_default=True,
              help="entity: holdout tasks ask about entities no train task names (generalization); ontology: holdout "
                   "tasks come from ontologies no train task uses (transfer).")
@click.option("--tasks", type=int, default=200, show_default=True, help="How many tasks in all.")
@click.option("--seed", type=int, default=0, show_default=True, help="Same seed and ontologies: the same file.")
@click.option("--holdout", type=float, default=0.25, show_default=True, help="The share of tasks held out.")
@click.option("--holdout-ontology", multiple=True, help="With --split ontology: an ontology (by name) to hold out; "
              "repeat it for several. Default: the seed picks.")
@click.option("--max-answers", type=int, default=15, show_default=True,
              help="Leave out list questions with more answers than this.")
@click.option("--id", "curriculum_id", default="", help="The curriculum's id (default: names, split and seed).")
@click.option("--out", required=True, help="The curriculum YAML to write.")
@json_option
@library_errors
@interruptible(lambda out, **_: f"curriculum make interrupted; nothing was written ({out} is written when every task "
               "is made)")
def curriculum_make(ontologies: tuple[str, ...], families: str, split: str, tasks: int, seed: int, holdout: float,
                    holdout_ontology: tuple[str, ...], max_answers: int, curriculum_id: str, out: str,
                    as_json: bool) -> None:
    """Make a curriculum of tasks with deterministic SPARQL gold from ONTOLOGIES (OWL or RDFS files, or dcterms,
    dc, dcmitype, schema: ontologies installed packages ship), checked at generation: every gold answers, and the
    judge accepts its answer.

    Example: owl-memory curriculum make dcterms --split entity --tasks 300 --out dcterms.yaml
    """
    from ..learning import MakeOptions, make_curriculum
    from ..rdfio import check_output, write_text

    target = check_output(out)
    options = MakeOptions(tuple(f.strip() for f in families.split(",") if f.strip()), split, tasks, seed, holdout,
                          max_answers, tuple(holdout_ontology), curriculum_id)
    made = make_curriculum(ontologies, options)
    write_text(made.to_yaml(target.parent), target)
    emit({"path": str(out), **made.summary()}, as_json, _made_report)


def _made_report(summary: dict) -> None:
    """Print what a curriculum holds: tasks per family and split, and what the split keeps apart."""
    rows = [(f, n["train"], n["holdout"]) for f, n in summary["families"].items()]
    table(("family", "train", "holdout"), rows, "no families")
    held = summary["held_out"]
    apart = f"{held['entities']} held-out entities" if "entities" in held else \
        f"held-out ontologies: {', '.join(held['ontologies'])}"
    click.echo(f"{summary['path']}: {summary['tasks']} tasks ({summary['splits']['train']} train, "
               f"{summary['splits']['holdout']} holdout) from {', '.join(summary['ontologies'])}; split "
               f"{summary['split']}, {apart}")


@click.command("score")
@click.argument("questions", type=click.Path())
@click.argument("answers", type=click.Path())
@endpoint_map_option
@click.option("--language", default="en", show_default=True, help="The language of the answered questions.")
@json_option
@library_errors
def score(questions: str, answers: str, endpoint_map: tuple[str, ...], language: str, as_json: bool) -> None:
    """Score a TEXT2SPARQL answers file (a JSON list of {qname, question, query}) as the challenge does: each
    question's reference and answer run on the endpoint the dataset id is mapped to, set_P / set_recall / set_F over
    the values of their results, averaged over every question (an unanswered, refused or failing one counts 0).

    Example: owl-memory score questions.yml ck25_answers.json --endpoint-map
    https://text2sparql.aksw.org/2025/corporate/=http://127.0.0.1:7878/query
    """
    from ..learning import score_answers

    emit(score_answers(questions, answers, endpoint_map, language), as_json, _score_report)


def _score_report(report: ScoreReport) -> None:
    """Print one row per question (the reason last), then the average."""
    table(("qname", "set_P", "set_recall", "set_F", "values", "reason"),
          [(q.qname, f"{q.scores.set_P:.3f}", f"{q.scores.set_recall:.3f}", f"{q.scores.set_F:.3f}",
            f"{q.answer_values}/{q.reference_values}", q.reason) for q in report.questions], "no questions")
    a = report.average
    click.echo(f"average over {len(report.questions)} questions on {report.endpoint}: set_P {a.set_P:.4f}, "
               f"set_recall {a.set_recall:.4f}, set_F {a.set_F:.4f}")


COMMANDS = (train, pack, curriculum, score)
