"""Typed values every package speaks: items, search hits, payload handles, compiled operators, query results, runs,
SHACL violations."""

from .changes import ChangeSet
from .handles import Ref, Window, sha256
from .items import Card, Hit, Item, ItemSpec, UseCounts, best_first, item_id, normalize_kind
from .judge_rules import JudgeRule, QueryConstraint
from .ontologies import OntologyContext
from .operators import (
    CompiledOperator,
    CqAnswer,
    CustomAction,
    FollowUp,
    Parameter,
    QueryRecipe,
    RepairDecision,
    ToolSequence,
    operator_from_json,
)
from .results import SearchExplanation, SparqlResult, ValidationReport
from .runs import MemoryAccess, MemoryUse, Quota, RunConfig, RunMetrics, RunResult
from .violations import Violation, violation_signature

__all__ = [
    "Card", "ChangeSet", "CompiledOperator", "CqAnswer", "CustomAction", "FollowUp", "Hit", "Item", "ItemSpec",
    "JudgeRule", "QueryConstraint",
    "MemoryAccess", "MemoryUse", "OntologyContext", "Parameter", "QueryRecipe", "Quota", "Ref", "RepairDecision",
    "RunConfig", "RunMetrics", "RunResult", "SearchExplanation", "SparqlResult", "ToolSequence", "UseCounts",
    "ValidationReport", "Violation", "Window", "best_first", "item_id", "normalize_kind", "operator_from_json",
    "sha256", "violation_signature",
]
