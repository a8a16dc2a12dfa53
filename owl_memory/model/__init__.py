"""Typed values every package speaks: items, search hits, payload handles, compiled operators, query results, runs,
LM calls, SHACL violations."""

from .changes import ChangeSet
from .consolidation import ConsolidationFigures, Report
from .events import (
    AgentQuery,
    CallArgs,
    ConstraintViolation,
    Construction,
    Event,
    Iteration,
    LayerBrief,
    MemoryNote,
    OntologyBrief,
    RunComplete,
    RunSettings,
    RunStart,
    ToolCall,
    ToolResult,
    event_from_dict,
)
from .handles import Ref, Window, sha256
from .items import Card, Hit, Item, ItemSpec, UseCounts, best_first, item_id, normalize_kind
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
from .runs import AnswerQuery, MemoryAccess, MemoryUse, Quota, RunConfig, RunMetrics, RunResult, ToolStats
from .training import Agreement, LearnedRules, RuleCounts, TrainedTask, TrainSummary
from .violations import Violation, violation_signature

__all__ = [
    "AgentQuery", "Agreement", "AnswerQuery", "CallArgs", "Card", "ChangeSet", "CompiledOperator",
    "ConsolidationFigures", "ConstraintViolation", "Construction", "CqAnswer", "CustomAction", "Event", "FollowUp",
    "Hit", "Item", "ItemSpec", "Iteration", "JudgeRule", "LayerBrief", "LearnedRules", "LmCall", "LmUsage",
    "MemoryAccess", "MemoryNote", "MemoryUse", "OntologyBrief",
    "OntologyContext", "Parameter", "QueryConstraint", "QueryRecipe", "Quota", "Ref", "RepairDecision", "Report",
    "RuleCounts", "RunComplete", "RunConfig", "RunMetrics", "RunResult", "RunSettings", "RunStart",
    "SearchExplanation", "SparqlResult", "ToolCall", "ToolResult", "ToolSequence", "ToolStats", "TrainSummary",
    "TrainedTask", "UseCounts", "ValidationReport", "Violation", "Window", "best_first", "event_from_dict", "item_id",
    "normalize_kind", "operator_from_json", "sha256", "violation_signature",
]
