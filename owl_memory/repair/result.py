"""What a repair did: the result of one run and each patch that fixed its violation."""

from __future__ import annotations

from dataclasses import dataclass, field

from rdflib import Graph


@dataclass(frozen=True)
class AppliedOperator:
    """A patch that fixed its violation in a repair run.

    Args:
        signature: the violation's signature.
        operator: the strategy id that made the patch.
        choice: the patch's choice (JSON value: which candidate of the strategy it is).
        focus: the focus node's IRI or id.
        memory_key: the signature or abstract key its compiled operator was found under (None: from the library).
    """

    signature: str
    operator: str
    choice: object
    focus: str
    memory_key: str | None = None

    @property
    def from_memory(self) -> bool:
        """True when a compiled operator from memory made the patch."""
        return self.memory_key is not None

    def to_dict(self) -> dict:
        """JSON-compatible form (from_memory included)."""
        return {"signature": self.signature, "operator": self.operator, "choice": self.choice, "focus": self.focus,
                "from_memory": self.from_memory, "memory_key": self.memory_key}


@dataclass
class RepairResult:
    """What a repair did and where it ended.

    Args:
        graph: the repaired data graph (a copy; the input is never modified).
        added: triples the repair added.
        removed: triples the repair removed.
        conforms: True when the last verification conformed.
        verify_iterations: verification rounds (whole-graph or focus-scoped); nested trial checks are not in it.
        compiled_reused: patches applied from compiled operators found in memory.
        compiled_new: ids of RepairOperators compiled into memory by this run.
        operators_applied: one AppliedOperator per applied patch that fixed its violation.
        unrepaired: signatures still violated at the end.
        reasons: signature -> why it is left (no operator, fixed term, rules forbid, rounds exhausted).
        initial_violations: violations before the repair.
        nested_checks: nested (single node, single shape) trial validations run by operators.
        scopes: the scope of each verification ("full" or "focus").
        prevented: learned follow-up fixes applied before a verification and confirmed by it.
        validations: every pySHACL validation run: verify_iterations + nested_checks.
        proposed: change sets the proposer returned (each then checked like any patch).
        lm_calls: LM calls the proposer made during this repair.
        changes: the change list: every added and removed triple, grouped by focus node and the violation its patch
            fixed, added values labelled with their origin (repair.changes.ChangeGroup).
    """

    graph: Graph
    added: set = field(default_factory=set)
    removed: set = field(default_factory=set)
    conforms: bool = False
    verify_iterations: int = 0
    compiled_reused: int = 0
    compiled_new: list = field(default_factory=list)
    operators_applied: list = field(default_factory=list)
    unrepaired: list = field(default_factory=list)
    reasons: dict = field(default_factory=dict)
    initial_violations: int = 0
    nested_checks: int = 0
    scopes: list = field(default_factory=list)
    proposed: int = 0
    lm_calls: int = 0
    prevented: int = 0
    changes: list = field(default_factory=list)

    @property
    def validations(self) -> int:
        """Every pySHACL validation this repair ran (rounds plus nested trial checks)."""
        return self.verify_iterations + self.nested_checks

    def to_dict(self) -> dict:
        """JSON-compatible summary (counts, operators and signatures; no graph)."""
        return {"conforms": self.conforms, "added": len(self.added), "removed": len(self.removed),
                "verify_iterations": self.verify_iterations, "compiled_reused": self.compiled_reused,
                "compiled_new": self.compiled_new, "operators_applied": [o.to_dict() for o in self.operators_applied],
                "unrepaired": self.unrepaired, "reasons": self.reasons,
                "initial_violations": self.initial_violations, "nested_checks": self.nested_checks,
                "validations": self.validations, "scopes": self.scopes, "proposed": self.proposed,
                "lm_calls": self.lm_calls, "prevented": self.prevented,
                "changes": [g.to_dict() for g in self.changes]}
