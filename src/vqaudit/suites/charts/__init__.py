"""PlotQA-style chart answerability groups from real data tables (seed 000, §3.1-3.2)."""
