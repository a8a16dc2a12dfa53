"""Provenance a researcher can query: an ablation's train runs leave their curriculum, iterations, convergence,
judgment, answer hash and condition in the memory graph, the debugging questions run in SPARQL over it, and the
export with all of it stays OWL 2 DL (the OWLAPI and HermiT check it)."""

from pathlib import Path

import yaml
from test_export_owl import owlcheck  # noqa: F401  (the OWLAPI/HermiT fixture)

from owl_memory import Memory
from owl_memory.ablation.harness import ablate
from owl_memory.model import sha256
from owl_memory.provenance import ITEMS_BY_ITERATIONS, PRODUCTIVE_TASKS, USED_BUT_FAILING

ROOT = Path(__file__).resolve().parents[1]
RUNS = """PREFIX om: <http://w3id.org/owl-memory#>
SELECT ?task ?curriculum ?iterations ?converged ?hash ?condition ?judge ?success WHERE {
  ?run a om:Run ; om:taskId ?task ; om:curriculumId ?curriculum ; om:iterations ?iterations ;
       om:converged ?converged ; om:answerHash ?hash ; om:condition ?condition .
  ?judgment a om:Judgment ; <http://www.w3.org/ns/prov#wasGeneratedBy> ?run ; om:judge ?judge ; om:success ?success .
} ORDER BY ?task"""
REEXTRACTED = """PREFIX om: <http://w3id.org/owl-memory#>
SELECT ?task ?item WHERE { ?run om:reextracted ?item ; om:taskId ?task } ORDER BY ?task"""


def curriculum(tmp_path: Path) -> Path:
    """A tiny curriculum: three hierarchy train tasks the scripted stand-in fails, one holdout task."""
    tasks = [{"id": f"t{n}", "query": f"Name direct subclass number {n} of lib:Work.", "task_type": "hierarchy",
              "expect": {"answer": "Book"}, "split": "train"} for n in range(3)]
    tasks.append({"id": "h1", "query": "Name the superclass of lib:Book.", "task_type": "hierarchy",
                  "expect": {"answer": "Work"}, "split": "holdout"})
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({"id": "tiny-v1", "ontology": {
        "name": "library", "path": str(ROOT / "experiments" / "curricula" / "library.ttl")}, "tasks": tasks}))
    return tmp_path / "c.yaml"


def trained(tmp_path: Path) -> Path:
    """The A2 memory after the tiny curriculum's train tasks (scripted stand-in)."""
    ablate(curriculum(tmp_path), "A2", out=tmp_path / "out", lm="scripted", holdout_every=3, parallel=False)
    return tmp_path / "out" / "memories" / "A2-r0"


def test_train_runs_carry_curriculum_iterations_convergence_judge_answer_hash_and_condition(tmp_path):
    with Memory(trained(tmp_path)) as m:
        rows = m.sparql(RUNS).rows
        assert [r[0] for r in rows] == ["t0", "t1", "t2"]  # train runs only: holdout runs write nothing
        assert all(r[1:] == ("tiny-v1", 2, True, sha256("unknown"), "A2", "answer", False) for r in rows)
        first = m.search(task_type="hierarchy")[0].id
        assert m.sparql(REEXTRACTED).rows == (("t1", f"http://w3id.org/owl-memory/item/{first}"),
                                              ("t2", f"http://w3id.org/owl-memory/item/{first}"))
        assert m.validate().conforms


def test_train_runs_carry_their_curriculum_and_task_like_an_ablation(tmp_path):
    from owl_memory.learning import load_curriculum, train_curriculum
    from owl_memory.model import RunConfig

    with Memory(tmp_path / "trained") as m:
        train_curriculum(load_curriculum(curriculum(tmp_path)), m, RunConfig(lm="scripted"), limit=2)
        assert [r[:2] for r in m.sparql(RUNS).rows] == [("t0", "tiny-v1"), ("t1", "tiny-v1")]


def test_the_debugging_questions_run_in_sparql(tmp_path):
    with Memory(trained(tmp_path)) as m:
        item = f"http://w3id.org/owl-memory/item/{m.search(task_type='hierarchy')[0].id}"
        by_iterations = m.sparql(ITEMS_BY_ITERATIONS)
        assert by_iterations.columns == ("item", "runs", "meanIterations", "difference")
        assert by_iterations.rows == ((item, 2, 2.0, 0.0),)  # used by t1 and t2, which took the mean iterations
        failing = m.sparql(USED_BUT_FAILING)
        assert failing.rows == ((item, 2, 2),)  # both runs that used it failed
        productive = m.sparql(PRODUCTIVE_TASKS)
        assert productive.rows[0] == ("tiny-v1", "t0", 1, 2)  # t0 made the item two later tasks' runs used


def test_the_export_with_run_provenance_is_owl2_dl_and_consistent(tmp_path, owlcheck):  # noqa: F811
    with Memory(trained(tmp_path)) as m:
        path = m.export(tmp_path / "memory.owl", format="xml")
    report = owlcheck(path)
    assert report["violation"] == [] and report["consistent"] == "true"
