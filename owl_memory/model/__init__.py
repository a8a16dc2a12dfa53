"""Typed values every package speaks: items, search hits, payload handles, compiled operators, query results, runs,
LM calls."""

from .changes import ChangeSet
from .consolidation import ConsolidationFigures, Report
from .events import (
    CallArgs,
    ConstraintViolation,
    Construction,
    Event,
    Iteration,
    LayerBrief,
    OntologyBrief,
    RunComplete,
    RunSettings,
    RunStart,
    ToolCall,
    ToolResult,
    event_from_dict,
)
from .handles import Ref, Window, sha256
from .items import Card, Hit, Item, ItemSpec, UseCounts, item_id, normalize_kind
from .judge_rules import JudgeRule, QueryConstraint
from .lm import LmCall, LmUsage
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
from .runs import MemoryAccess, MemoryUse, Quota, RunConfig, RunMetrics, RunResult, ToolStats
from .training import Agreement, LearnedRules, RuleCounts, TrainedTask, TrainSummary

__all__ = [
    "Card", "ChangeSet", "CompiledOperator", "CqAnswer", "CustomAction", "FollowUp", "Hit", "Item", "ItemSpec",
    "JudgeRule", "LmCall", "LmUsage", "QueryConstraint",
    "MemoryAccess", "MemoryUse", "OntologyContext", "Parameter", "QueryRecipe", "Quota", "Ref", "RepairDecision",
    "RunConfig", "RunMetrics", "RunResult", "SearchExplanation", "SparqlResult", "ToolSequence", "UseCounts",
    "ValidationReport", "Window", "item_id", "normalize_kind", "operator_from_json", "sha256",
    "Agreement", "ConsolidationFigures", "LearnedRules", "Report", "RuleCounts", "TrainedTask", "TrainSummary",
    "CallArgs", "ConstraintViolation", "Construction", "Event", "Iteration", "LayerBrief", "OntologyBrief",
    "RunComplete", "RunSettings", "RunStart", "ToolCall", "ToolResult", "ToolStats", "event_from_dict",
]
