"""Named ablation configs: a memory condition plus context layers and switches, loaded from an experiment YAML.

An experiment file names a curriculum and the configs to compare (the layer experiments E1–E8 ship in
experiments/ablation/layers.yaml, the closed-loop ones E9–E11 in closed_loop.yaml, the text baselines in
baselines.yaml):

    curriculum: ../curricula/library.yaml          # relative to this file
    guide: ../curricula/library.guide.md           # what layer L3 summarizes (optional)
    configs:
      E2: {condition: A0, layers: [L0], about: "L0 alone: the ontology sense card"}
      A1k1: {condition: A1, k: 1, about: "ReasoningBank's k = 1: the single best item"}
      E9: {condition: A1, consolidate: false, about: "append-only memory"}
      E11: {condition: A1, max_items: 8, about: "a bounded bank: the least useful items are archived"}

A plain condition (A0 ... A5) is the config of that name with no layers, so one harness runs both. `k` (A1 only) is
which items A1 injects (model.Quota: an integer for the top k, or success,failure,seed counts; default 2,1,1);
`consolidate: false` stores extracted items append-only (no merge, no conflict or exception links); `max_items`
bounds the arm's memory (forgetting: the least useful items are archived); `budgets` sets layer budgets in
characters (L0, L1, L3, and L2 for A1's injected text); `max_output_chars` the REPL output the model sees per
iteration; `pack` a memory pack (a shipped name such as starter, or a file) the arm's memory starts with. A config's
own setting wins over the command line's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from ..agent import CONDITIONS
from ..errors import ConfigError, LoadError
from ..model.runs import Quota, check_output_cap, parse_budgets, parse_layers

KEYS = {"condition", "layers", "about", "k", "consolidate", "max_items", "budgets", "max_output_chars", "pack"}


@dataclass(frozen=True)
class Config:
    """One arm of an ablation.

    Args:
        name: how records and the report name it (E1, A2, ...).
        condition: the memory condition (A0–A4) the runner gets.
        layers: context layers (L0, L1, L3) given to the model.
        guide: the guide file L3 summarizes (absolute), when the experiment has one.
        about: one line saying what the arm tests.
        k: which items A1 injects (a Quota; None: the command line's, else the default 2 + 1 + 1).
        consolidate: False stores extracted items append-only; None: the command line's choice.
        max_items: the arm memory's bound (forgetting); None: the command line's, else unbounded.
        budgets: layer budgets in characters (L0, L1, L3; L2 bounds A1's text).
        max_output_chars: REPL output the model sees per iteration; None: the command line's, else RunConfig's.
        pack: the memory pack (a shipped name or a file, absolute) the arm's starting memory is seeded with; None:
            the command line's --pack, if any.
    """

    name: str
    condition: str
    layers: tuple[str, ...] = ()
    guide: str | None = None
    about: str = ""
    k: Quota | None = None
    consolidate: bool | None = None
    max_items: int | None = None
    budgets: dict = field(default_factory=dict)
    max_output_chars: int | None = None
    pack: str | None = None

    def settled(self, k=None, consolidate: bool = True, max_items: int | None = None, budgets=None,
                max_output_chars: int | None = None) -> Config:
        """This config with what it leaves unset taken from the command line (its own settings win)."""
        return replace(self, k=self.k or (Quota.parse(k) if self.condition == "A1" else None),
                       consolidate=consolidate if self.consolidate is None else self.consolidate,
                       max_items=self.max_items if self.max_items is not None else max_items,
                       budgets={**parse_budgets(budgets), **self.budgets},
                       max_output_chars=self.max_output_chars or max_output_chars)

    def run_options(self) -> dict:
        """Keyword arguments for agent.runner.run / learning.loop.run_learning (RunConfig fields)."""
        return {"condition": self.condition, "layers": self.layers, "guide": self.guide, "k": self.k,
                "budgets": self.budgets, **({"max_output_chars": self.max_output_chars} if self.max_output_chars
                                            else {})}

    def to_dict(self) -> dict:
        """JSON form (for summary.json)."""
        return {"name": self.name, "condition": self.condition, "layers": list(self.layers), "guide": self.guide,
                "about": self.about, "k": self.k.to_json() if self.k is not None else None,
                "consolidate": self.consolidate, "max_items": self.max_items, "budgets": dict(self.budgets),
                "max_output_chars": self.max_output_chars, "pack": self.pack}


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
    """One checked config entry (its name becomes a folder and file name of the output: letters, digits, `_`, `-`,
    `.`, at most 64, not starting with a dot)."""
    if not re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}", str(name)):
        raise ConfigError(f"config name {str(name)[:80]!r} in {path.name}: use letters, digits, _, - and . (at most "
                          "64, not starting with a dot); it names the arm's folders")
    if not isinstance(spec, dict) or set(spec) - KEYS or "condition" not in spec:
        raise ConfigError(f"config {name} in {path.name} must be a mapping with `condition` (and optional "
                          f"{', '.join(sorted(KEYS - {'condition'}))}); got {spec!r}")
    layers = parse_layers(spec.get("layers"))
    if "L3" in layers and guide is None:
        raise ConfigError(f"config {name} in {path.name} uses layer L3: add `guide: FILE` to the experiment")
    base = plain(str(spec["condition"]))
    try:
        return Config(name, base.condition, layers, guide if "L3" in layers else None, str(spec.get("about", "")),
                      _k(name, spec, base.condition, path), _switch(spec.get("consolidate")),
                      _bound(spec.get("max_items")), parse_budgets(spec.get("budgets")),
                      check_output_cap(spec["max_output_chars"]) if "max_output_chars" in spec else None,
                      _pack(spec.get("pack"), path))
    except ConfigError as e:
        raise ConfigError(f"config {name} in {path.name}: {e}") from e


def _pack(value, path: Path) -> str | None:
    """A config's `pack`: a shipped pack's name or a file relative to the experiment, as learning.pack_path finds
    it (LoadError listing the shipped packs otherwise)."""
    if value is None:
        return None
    from ..learning import pack_path

    relative = path.parent / str(value)
    try:
        return str(pack_path(relative if relative.is_file() else str(value)))
    except LoadError as e:
        raise ConfigError(f"`pack`: {e}") from None


def _k(name: str, spec: dict, condition: str, path: Path) -> Quota | None:
    """A config's `k` (Quota.parse), given only to A1 (the one condition that injects retrieved items)."""
    if "k" not in spec:
        return None
    if condition != "A1":
        raise ConfigError(f"`k` is how many items A1 injects; {condition} injects none")
    k = spec["k"]
    try:
        if isinstance(k, str) and k.strip().isdigit():
            raise ConfigError("a quoted number")
        return Quota.parse(k)
    except ConfigError:
        raise ConfigError(f"`k` must be a whole number >= 1 (unquoted), or success,failure,seed counts such as "
                          f"2,1,1; got {k!r}") from None


def _switch(value) -> bool | None:
    """`consolidate`: true, false or absent."""
    if value is not None and not isinstance(value, bool):
        raise ConfigError(f"`consolidate` must be true or false, got {value!r}")
    return value


def _bound(value) -> int | None:
    """`max_items`: a whole number >= 1 or absent."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ConfigError(f"`max_items` must be a whole number >= 1, got {value!r}")
    return value


def _existing(path: Path, what: str) -> Path:
    """The resolved path, or a ConfigError naming the missing file."""
    if not path.is_file():
        raise ConfigError(f"the experiment's {what} {path} does not exist; paths are relative to the experiment file")
    return path.resolve()
