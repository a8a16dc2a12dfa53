"""Ablations A0–A4: the harness streaming a curriculum through conditions, its records, summary and report."""

from .records import Record, read_records, summarize
from .report import build_report

__all__ = ["Record", "build_report", "read_records", "summarize"]
