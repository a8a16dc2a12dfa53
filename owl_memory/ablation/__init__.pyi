"""The public names of owl_memory.ablation (the front door): owl_memory/lazy.py imports each on first use."""

from .cost import Estimate as Estimate, estimate as estimate
from .harness import ablate as ablate
from .records import Record as Record, TaskOutcome as TaskOutcome, read_records as read_records
from .report import build_report as build_report
from .summary import ConditionSummary as ConditionSummary, Summary as Summary, summarize as summarize
