"""Run reports: one self-contained HTML file per run directory."""

from confide.report.html import build_report

__all__ = ["build_report"]
