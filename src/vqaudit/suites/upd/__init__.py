"""MM-UPD: AAD, IASD and IVQD variants of multiple-choice VQA items (seed 001; docs/papers.md, seed 001).

``build_upd`` writes a benchmark folder; ``export_tuning`` writes LLaVA instruction-tuning data (seed 001, §6).
"""

from vqaudit.suites.upd.build import build_upd
from vqaudit.suites.upd.tuning import export_tuning

__all__ = ["build_upd", "export_tuning"]
