"""Ablations A0–A4: the harness streaming a curriculum through conditions, its records, summary and report."""

from .records import Record, TaskOutcome, read_records
from .report import build_report
from .summary import Summary, summarize

__all__ = ["Record", "Summary", "TaskOutcome", "build_report", "read_records", "summarize"]
