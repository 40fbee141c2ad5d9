"""Short-answer score audit (seed 002): gold loaders, prediction importers and the gold/prediction join.

- :mod:`.records`: the frozen records (``GoldItem``, ``Prediction``, ``AuditRow``, ``JoinReport``);
- :mod:`.loaders`: TextVQA, ST-VQA, DocVQA, InfographicVQA, ChartQA and VizWiz annotation layouts;
- :mod:`.importers`: generic JSONL/CSV/TSV, lmms-eval sample logs, VLMEvalKit result sheets (xlsx via the
  stdlib reader in :mod:`vqaudit.xlsx`), MultimodalOCR answer files, LLaVA answer files;
- :mod:`.join`: the join that reports predictions without gold and gold without predictions;
- :mod:`.benchmarks`: the benchmark table, one row per benchmark (loader, gold layout, answers per question,
  gold required, official metric and variant, answerability).
"""
