"""The layer experiments E1–E8 as shipped ablation configs: loaded, checked, and each run once with a scripted LM."""

import json
from pathlib import Path

import pytest
import yaml
from dspy.utils import DummyLM

from owl_memory import run
from owl_memory.ablation.configs import is_experiment, load_experiment, plain
from owl_memory.ablation.harness import ablate
from owl_memory.agent.trajectory import read_trajectory
from owl_memory.errors import ConfigError
from owl_memory.learning import load_curriculum
from owl_memory.model import RunStart

ROOT = Path(__file__).resolve().parents[1]
LAYERS_YAML = ROOT / "experiments" / "ablation" / "layers.yaml"
QUERY = ("PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> PREFIX lib: <http://w3id.org/owl-memory/examples/"
         "library#> SELECT ?x WHERE { ?x rdfs:subClassOf lib:Work }")
AGENT = [{"reasoning": "query", "code": f"r = ontology_query({QUERY!r})\nrows = results_peek(r['handle'], 20)['rows']"},
         {"reasoning": "answer", "code": "SUBMIT(answer=', '.join(sorted(v.rsplit('#', 1)[1] for row in rows "
                                         "for v in row.values())))"}]


@pytest.fixture(scope="module")
def experiment():
    """The shipped E1–E8 experiment."""
    return load_experiment(LAYERS_YAML)


def test_shipped_experiment_names_e1_to_e8(experiment):
    assert is_experiment(LAYERS_YAML) and not is_experiment(experiment.curriculum)
    assert list(experiment.configs) == ["E1", "E2", "E3", "E4", "E5", "E6", "E7a", "E7b", "E8a", "E8b"]
    by = {n: (c.condition, c.layers) for n, c in experiment.configs.items()}
    assert by["E1"] == ("A0", ()) and by["E2"] == ("A0", ("L0",)) and by["E3"] == ("A0", ("L1",))
    assert by["E4"] == ("A0", ("L3",)) and by["E5"] == ("A1", ()) and by["E6"] == ("A1", ("L0", "L1", "L3"))
    assert by["E7a"][0] == "A4" and by["E7b"][0] == "A2"  # naive vs handle tools
    assert by["E8a"] == ("A1", ("L0", "L1")) and by["E8b"] == ("A2", ("L0", "L1"))  # injected vs tool-mediated
    assert experiment.configs["E4"].guide.endswith("library.guide.md") and experiment.configs["E1"].guide is None
    assert [c.name for c in experiment.select("E6,E1")] == ["E6", "E1"]
    assert experiment.configs["E5"].pack.endswith("starter.jsonl") and experiment.configs["E6"].pack is None


def test_an_arm_with_a_pack_starts_from_it_and_the_others_do_not(tmp_path):
    from test_provenance_queries import curriculum

    from owl_memory import Memory
    from owl_memory.ablation.harness import ablate

    (tmp_path / "e.yaml").write_text(f"curriculum: {curriculum(tmp_path)}\nconfigs:\n"
                                     "  seeded: {condition: A1, pack: starter}\n  plain: {condition: A1}\n")
    ablate(tmp_path / "e.yaml", "seeded,plain", out=tmp_path / "out", lm="scripted", holdout_every=3,
           parallel=False)
    starter = {"c5f3bbc908df31ee", "b4b019a8d08020ea"}  # two of the starter pack's items
    with Memory(tmp_path / "out" / "memories" / "seeded-r0") as m:
        assert m.stored(starter) == starter
    with Memory(tmp_path / "out" / "memories" / "plain-r0") as m:
        assert not m.stored(starter)


@pytest.mark.parametrize("name", ["E1", "E2", "E3", "E4", "E5", "E6", "E7a", "E7b", "E8a", "E8b"])
def test_each_config_runs_and_is_judged_with_a_scripted_lm(experiment, memory, tmp_path, name):
    config = experiment.configs[name]
    t = next(t for t in load_curriculum(experiment.curriculum).tasks if t.id == "lib-hierarchy-01")
    lm = DummyLM(AGENT)
    r = run(t.query, memory=memory, ontology=load_curriculum(experiment.curriculum).ontology_path, lm=lm,
            learn=True, expect=t.expect, task_type=t.task_type, trajectory_dir=tmp_path, **config.run_options())
    assert r.judgment.success and r.answer == "Article, Book, Thesis"
    start = next(e for e in read_trajectory(r.trajectory_path) if isinstance(e, RunStart))
    assert start.config.condition == config.condition
    assert [layer.name for layer in start.config.layers] == list(config.layers)
    user = "\n".join(m["content"] for m in lm.history[0]["messages"] if m["role"] == "user")
    assert ("Guide summary (L3):" in user) == ("L3" in config.layers)
    assert ("Ontology sense card (L0)" in user) == ("L0" in config.layers)


@pytest.mark.parametrize("text,message", [
    ("configs: {E1: {condition: A0}}", "needs `curriculum: FILE`"),
    ("curriculum: nowhere.yaml\nconfigs: {E1: {condition: A0}}", "does not exist"),
    ("curriculum: c.yaml\nconfigs: {E1: {condition: A9}}", "is not one of A0"),
    ("curriculum: c.yaml\nconfigs: {E1: {condition: A0, layers: [L2]}}", "is condition A1"),
    ("curriculum: c.yaml\nconfigs: {E1: {condition: A0, layers: [L3]}}", "add `guide: FILE`"),
    ("curriculum: c.yaml\nconfigs: {E1: {condition: A0, tools: naive}}", "must be a mapping with `condition`"),
    ("curriculum: c.yaml\nconfigs: [", "not valid YAML"),
    ("curriculum: c.yaml\nconfigs: {E1: {condition: A2, k: 3}}", "`k` is how many items A1 injects"),
    ("curriculum: c.yaml\nconfigs: {E1: {condition: A1, k: 0}}", "`k` must be a whole number >= 1"),
    ("curriculum: c.yaml\nconfigs: {E1: {condition: A1, k: '2'}}", "`k` must be a whole number >= 1"),
    ("curriculum: c.yaml\nconfigs: {'../../pwn': {condition: A0}}", "it names the arm's folders"),
    ("curriculum: c.yaml\nconfigs: {'.hidden': {condition: A0}}", "not starting with a dot"),
    ("curriculum: c.yaml\nconfigs: {E1: {condition: A1, pack: nowhere}}", "shipped"),
])
def test_bad_experiment_files_say_what_to_fix(tmp_path, text, message):
    (tmp_path / "c.yaml").write_text("id: c\ntasks: []\n")
    (tmp_path / "e.yaml").write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_experiment(tmp_path / "e.yaml")


def test_unknown_config_names_are_refused(experiment):
    with pytest.raises(ConfigError, match="use any of E1, E2"):
        experiment.select("E1,E9")
    assert plain("A2").layers == () and plain("A2").name == "A2"


def test_every_shipped_config_runs_through_the_ablation_harness(tmp_path):
    """The shipped E1–E8 configs, unchanged, on a one-train one-holdout curriculum: records per arm, layers sent."""
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({"id": "tiny", "ontology": {"name": "library", "path": str(
        ROOT / "experiments" / "curricula" / "library.ttl")}, "tasks": [
        {"id": "t1", "query": "Name one direct subclass of lib:Work.", "expect": {"answer": "Book"}, "split": "train"},
        {"id": "h1", "query": "Name the superclass of lib:Book.", "expect": {"answer": "Work"}, "split": "holdout"}]}))
    data = yaml.safe_load(LAYERS_YAML.read_text())
    data.update(curriculum=str(tmp_path / "c.yaml"), guide=str(ROOT / "experiments" / "curricula" / "library.guide.md"))
    (tmp_path / "e.yaml").write_text(yaml.safe_dump(data))
    lm = DummyLM([{"reasoning": "answer", "code": "SUBMIT(answer='Book')"}] * 100)
    summary = ablate(tmp_path / "e.yaml", list(data["configs"]), out=tmp_path / "out", lm=lm)
    records = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert sorted(r["condition"] for r in records) == sorted(list(data["configs"]) * 3)  # holdout, train, holdout
    assert all(r["success"] == (r["task_id"] == "t1") for r in records)
    firsts = ["\n".join(m["content"] for m in e["messages"] if m["role"] == "user") for e in lm.history]
    assert sum("Guide summary (L3):" in text for text in firsts) == 2 * 3  # E4 and E6, three runs each
    assert set(summary.conditions) == set(data["configs"])


def test_a1_injects_k_items_as_its_config_says(tmp_path):
    """A1's k is an experiment-file option: the A1k2 arm's model gets the top two items appended to the task, plain A1
    its default quota (2 success + 1 failure + 1 seed item), which here, three hand-written seed items, is one; same
    memory, tasks and LM."""
    from owl_memory import ItemSpec, Memory

    onto = "http://w3id.org/owl-memory/examples/library"
    with Memory(tmp_path / "start") as m:
        for n in range(3):
            m.add(ItemSpec("Procedure", f"Superclass of Book lookup {n}", f"Use for superclass questions {n}.",
                           f"- read rdfs:subClassOf of the class {n}", applies_to=(onto,), task_types=("general",)))
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({"id": "tiny", "ontology": {"name": "library", "path": str(
        ROOT / "experiments" / "curricula" / "library.ttl")}, "tasks": [
        {"id": "t1", "query": "Name the superclass of lib:Book.", "expect": {"answer": "Work"}, "split": "train"},
        {"id": "h1", "query": "Name the superclass of lib:Book.", "expect": {"answer": "Work"}, "split": "holdout"}]}))
    (tmp_path / "e.yaml").write_text("curriculum: c.yaml\nconfigs: {A1: {condition: A1}, A1k2: {condition: A1, k: 2}}")
    lm = DummyLM([{"reasoning": "answer", "code": "SUBMIT(answer='Work')"}] * 20)
    summary = ablate(tmp_path / "e.yaml", "A1,A1k2", out=tmp_path / "out", lm=lm, memory=tmp_path / "start")
    first = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()
             if '"checkpoint": 0' in line]
    assert {r["condition"]: len(r["memory_ids_used"]) for r in first} == {"A1": 1, "A1k2": 2}
    sent = ["\n".join(m["content"] for m in e["messages"] if m["role"] == "user") for e in lm.history]
    assert [sent[i].count("Superclass of Book lookup") for i in (0, 3)] == [1, 2]  # each arm's first run, untrained
    assert [a["k"] for a in summary.settings["arms"]] == ["2+1+1", 2]
    assert "A1k2 = A1 (k=2)" in (tmp_path / "out" / "report.html").read_text()
