"""Fault injection: the checker rejects every designed fault, for the intended reason (seed 000, appendix D)."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from vqaudit.files import read_json
from vqaudit.store import load_benchmark
from vqaudit.suites.charts.faults import FAULT_KINDS, Fault, design_faults
from vqaudit.verify import check_certificate

# The condition each kind breaks, as the checker words it (seed 000, §3.2: admissible, renderable, answers
# differ, pixel equality with the saved image; plus the mask band fixed by the layout).
REASON = {
    "autoscaled_axis": "differs from the declared",
    "value_label_leak": "masked render of world_b differs from the saved image",
    "shifted_mask": "is not the layout's",
    "line_leak": "masked render of world_b differs from the saved image",
    "out_of_axis": "outside the axis range",
    "off_grid": "off the grid",
    "identical_answers": "answers do not differ",
    "tampered_image": "differs from the saved image",
    "swapped_world": "not the view's world",
}


def _check(fault: Fault) -> list[str]:
    return check_certificate(fault.view, fault.certificate, fault.image_png)


def test_every_designed_fault_is_rejected_for_its_reason(chart_bench: Path) -> None:
    views = [v for v in load_benchmark(chart_bench).views if v.state == "M"][:12]
    genuine = [(v, read_json(chart_bench / v.meta["certificate"]), (chart_bench / v.image).read_bytes()) for v in views]
    assert all(check_certificate(v, c, img) == [] for v, c, img in genuine)
    faults = design_faults(genuine)
    assert len(faults) == 12 * 9 >= 100 and {f.kind for f in faults} == set(FAULT_KINDS)
    with ProcessPoolExecutor(max_workers=2) as pool:
        verdicts = list(pool.map(_check, faults, chunksize=4))
    for fault, problems in zip(faults, verdicts, strict=True):
        assert problems, f"{fault.kind} on {fault.view.view_id} was accepted"
        assert any(REASON[fault.kind] in p for p in problems), (fault.kind, problems)
