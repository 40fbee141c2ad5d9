"""Reports: a Markdown table comparing runs and a PNG bar chart of Jk/Bk with intervals."""

from vqaudit.report.compare import RunResult, load_run_result, write_report

__all__ = ["RunResult", "load_run_result", "write_report"]
