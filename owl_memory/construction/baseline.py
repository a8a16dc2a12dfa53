"""A sprint's baseline: the violations its seed has before anything changes, and what the sprint may do about them.

With `baseline: exclude` they are not the sprint's to fix: its `conforms` means "no violation but the baseline
ones", and their focus nodes are never edited. With `baseline: repair` every violation counts.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model import Violation
from ..repair import VerifyResult, verify
from .sprint_result import BaselineReport
from .workspace import Workspace


def violation_key(violation: Violation) -> tuple:
    """What identifies a violation across runs: its focus node and its signature."""
    return (violation.focus.n3(), violation.signature)


@dataclass(frozen=True)
class Baseline:
    """The seed's verification and the policy that says what of it the sprint owns.

    Args:
        policy: "exclude" or "repair".
        result: the seed's verification.
        keys: violation keys the sprint does not own (empty under "repair").
    """

    policy: str
    result: VerifyResult
    keys: frozenset

    @classmethod
    def check(cls, ws: Workspace, policy: str, blobs=None) -> Baseline:
        """Verify the workspace's seed (one pySHACL run) and fix the baseline under `policy`."""
        result = verify(ws.working, ws.shapes, blobs=blobs)
        keys = frozenset(violation_key(x) for x in result.violations) if policy == "exclude" else frozenset()
        return cls(policy, result, keys)

    def mine(self, violations) -> list:
        """The violations that are the sprint's: all of them minus the baseline ones."""
        return [x for x in violations if violation_key(x) not in self.keys]

    @property
    def frozen(self) -> set:
        """Nodes the sprint must not edit: the baseline focus nodes when the baseline is excluded."""
        return {x.focus for x in self.result.violations} if self.policy == "exclude" else set()

    def report(self, final: VerifyResult) -> BaselineReport:
        """The policy, the baseline's size and how many of its violations the sprint's changes resolved."""
        before = {violation_key(x) for x in self.result.violations}
        after = {violation_key(x) for x in final.violations}
        return BaselineReport(self.policy, len(before), len(before - after), self.result.signatures)
