"""Named ablation configs: a memory condition plus context layers, loaded from an experiment YAML.

An experiment file names a curriculum and the configs to compare (the layer experiments E1–E8 ship in
experiments/ablation/layers.yaml):

    curriculum: ../curricula/library.yaml          # relative to this file
    guide: ../curricula/library.guide.md           # what layer L3 summarizes (optional)
    configs:
      E2: {condition: A0, layers: [L0], about: "L0 alone: the ontology sense card"}
      A1k3: {condition: A1, k: 3, about: "ReasoningBank-style text, the top 3 items"}

A plain condition (A0 ... A4) is the config of that name with no layers, so one harness runs both. `k` (A1 only,
default 1 as in ReasoningBank) is how many retrieved items A1 injects into the task.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from ..agent.conditions import CONDITIONS
from ..agent.context import parse_layers
from ..errors import ConfigError

KEYS = {"condition", "layers", "about", "k"}


@dataclass(frozen=True)
class Config:
    """One arm of an ablation.

    Args:
        name: how records and the report name it (E1, A2, ...).
        condition: the memory condition (A0–A4) the runner gets.
        layers: context layers (L0, L1, L3) given to the model.
        guide: the guide file L3 summarizes (absolute), when the experiment has one.
        about: one line saying what the arm tests.
        k: items A1 injects into the task (ReasoningBank's default, 1, elsewhere).
    """

    name: str
    condition: str
    layers: tuple[str, ...] = ()
    guide: str | None = None
    about: str = ""
    k: int = 1

    def run_options(self) -> dict:
        """Keyword arguments for agent.runner.run / learning.loop.run_learning."""
        return {"condition": self.condition, "layers": self.layers, "guide": self.guide, "k": self.k}

    def to_dict(self) -> dict:
        """JSON form (for summary.json)."""
        return {"name": self.name, "condition": self.condition, "layers": list(self.layers), "guide": self.guide,
                "about": self.about, "k": self.k}


@dataclass(frozen=True)
class Experiment:
    """An experiment file: the curriculum it runs and its configs, in file order.

    Args:
        path: the experiment YAML.
        curriculum: the curriculum YAML it names (absolute).
        configs: name -> Config.
    """

    path: Path
    curriculum: Path
    configs: dict[str, Config]

    def select(self, names=None) -> list[Config]:
        """The named configs (all when None), in the order asked; ConfigError naming the known ones."""
        wanted = [n.strip() for n in (names.split(",") if isinstance(names, str) else names or self.configs)]
        unknown = [n for n in wanted if n not in self.configs]
        if unknown or not wanted:
            raise ConfigError(f"configs {unknown or wanted} are not in {self.path.name}; "
                              f"use any of {', '.join(self.configs)}")
        return [self.configs[n] for n in wanted]


def plain(condition: str) -> Config:
    """The config of a bare condition (no layers)."""
    if condition not in CONDITIONS:
        raise ConfigError(f"condition {condition!r} is not one of {', '.join(CONDITIONS)}")
    return Config(condition, condition)


def is_experiment(path: str | Path) -> bool:
    """True when a YAML file is an experiment file (it has `configs:`), not a curriculum."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return False
    return isinstance(data, dict) and "configs" in data


def load_experiment(path: str | Path) -> Experiment:
    """Read and check an experiment file; ConfigError saying which key or config is wrong."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(f"cannot read experiment file {path}: {e.strerror}; check the path") from e
    except yaml.YAMLError as e:
        raise ConfigError(f"experiment file {path} is not valid YAML: {e}") from e
    if not isinstance(data, dict) or not isinstance(data.get("configs"), dict) or not data.get("curriculum"):
        raise ConfigError(f"{path} needs `curriculum: FILE` and `configs:` (name -> {{condition, layers}})")
    curriculum = _existing(path.parent / str(data["curriculum"]), "curriculum")
    guide = str(_existing(path.parent / str(data["guide"]), "guide")) if data.get("guide") else None
    configs = {str(n): _config(str(n), spec, guide, path) for n, spec in data["configs"].items()}
    return Experiment(path, curriculum, configs)


def _config(name: str, spec, guide: str | None, path: Path) -> Config:
    """One checked config entry."""
    if not isinstance(spec, dict) or set(spec) - KEYS or "condition" not in spec:
        raise ConfigError(f"config {name} in {path.name} must be a mapping with `condition` "
                          f"(and optional `layers`, `about`, `k`); got {spec!r}")
    layers = parse_layers(spec.get("layers"))
    if "L3" in layers and guide is None:
        raise ConfigError(f"config {name} in {path.name} uses layer L3: add `guide: FILE` to the experiment")
    base = plain(str(spec["condition"]))
    return Config(name, base.condition, layers, guide if "L3" in layers else None, str(spec.get("about", "")),
                  _k(name, spec, base.condition, path))


def _k(name: str, spec: dict, condition: str, path: Path) -> int:
    """A config's `k`: an integer >= 1, given only to A1 (the one condition that injects retrieved items)."""
    k = spec.get("k", 1)
    if "k" in spec and condition != "A1":
        raise ConfigError(f"config {name} in {path.name}: `k` is how many items A1 injects; {condition} has none")
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ConfigError(f"config {name} in {path.name}: `k` must be a whole number >= 1, got {k!r}")
    return k


def _existing(path: Path, what: str) -> Path:
    """The resolved path, or a ConfigError naming the missing file."""
    if not path.is_file():
        raise ConfigError(f"the experiment's {what} {path} does not exist; paths are relative to the experiment file")
    return path.resolve()
