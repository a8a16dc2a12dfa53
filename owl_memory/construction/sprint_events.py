"""What a sprint reports while it runs, one typed event per kind of step, for progress displays."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar


@dataclass(frozen=True)
class SprintEvent:
    """Something a running sprint reports; `line()` is its one-line text."""

    name: ClassVar[str] = "event"

    def line(self) -> str:
        """`name: field=value, ...`, fields in order."""
        return f"{self.name}: " + ", ".join(f"{f.name}={getattr(self, f.name)}" for f in fields(self))


@dataclass(frozen=True)
class BaselineChecked(SprintEvent):
    """The seed was verified before any change: `violations` is the baseline."""

    name: ClassVar[str] = "baseline"
    violations: int


@dataclass(frozen=True)
class CompiledReplayed(SprintEvent):
    """Compiled answers from memory were applied in one delta."""

    name: ClassVar[str] = "compiled"
    reused: int


@dataclass(frozen=True)
class StepDone(SprintEvent):
    """One propose / verify step ended with `violations` in the sprint's scope (before repair)."""

    name: ClassVar[str] = "step"
    step: int
    cq: str | None
    violations: int


@dataclass(frozen=True)
class Proposed(SprintEvent):
    """A proposer answered a failing CQ with `added` triples."""

    name: ClassVar[str] = "propose"
    cq: str
    source: str
    added: int


@dataclass(frozen=True)
class Repaired(SprintEvent):
    """One repair call added and removed triples; `conforms` is its own verdict."""

    name: ClassVar[str] = "repair"
    added: int
    removed: int
    conforms: bool


@dataclass(frozen=True)
class SprintDone(SprintEvent):
    """The sprint ended."""

    name: ClassVar[str] = "done"
    cqs_passed: int
    cqs_total: int
    conforms: bool
