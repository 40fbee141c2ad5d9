"""Short-answer score audit (seed 002): gold loaders, prediction importers and the gold/prediction join.

- :mod:`.records`: the frozen records (``GoldItem``, ``Prediction``, ``AuditRow``, ``JoinReport``);
- :mod:`.loaders`: TextVQA, ST-VQA, DocVQA, InfographicVQA and ChartQA annotation layouts;
- :mod:`.importers`: generic JSONL/CSV/TSV, lmms-eval sample logs, VLMEvalKit result sheets (xlsx via the
  stdlib reader in :mod:`.xlsx`), MultimodalOCR answer files, LLaVA answer files;
- :mod:`.join`: the join that reports predictions without gold and gold without predictions;
- :mod:`.benchmarks`: which official metric (and variant) each benchmark name uses.
"""
