"""The chart reader and the leak audit on a real 20-group chart build (the figures of docs/chart-reader.md).

What must hold: the reader answers exactly at least 80% of the supported bar views (states original,
S, C of vbar and hbar charts) and abstains on at least 95% of the M and of the I views, for every chart kind;
audit-leaks finds every leaking designed fault of audit-checker and no leak on the genuine build. The gold is
the build's own (the rendered world's exact values); the figures of every kind are printed (``-s``).
"""

from __future__ import annotations

import json
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest

from shortanswer.helpers import run_cli
from vqaudit.backends.chart_reader import Ocr, parse_lookup, read_chart, read_lookup
from vqaudit.store import load_benchmark
from vqaudit.suites.charts.build import build_charts
from vqaudit.suites.charts.leaks import LEAKING_FAULTS, audit_fault_leaks, audit_leaks
from vqaudit.suites.charts.png import decode_png

pytest.importorskip("rapidocr")  # the [ocr] extra


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("reader") / "bench"
    build_charts(out, 20, seed=7, workers=2)
    return out


@pytest.fixture(scope="module")
def ocr() -> Ocr:
    return Ocr()


def test_reader_figures_per_chart_kind(bench: Path, ocr: Ocr) -> None:
    loaded = load_benchmark(bench)
    tally: Counter[tuple[str, str, bool]] = Counter()
    for view in loaded.views:
        reading = read_lookup(
            read_chart(decode_png(loaded.image_path(view).read_bytes()), ocr), parse_lookup(view.question)
        )
        if view.obligation.kind == "answer":
            ok = reading.answerable and reading.value == Fraction(view.obligation.gold[0])
            tally[(view.meta["kind"], "supported", ok)] += 1
        else:
            tally[(view.meta["kind"], view.state, not reading.answerable)] += 1
    figures = {}
    for kind in sorted({k for k, _, _ in tally}):
        for what in ("supported", "M", "I"):
            n = tally[(kind, what, True)] + tally[(kind, what, False)]
            if n:
                figures[f"{kind} {what}"] = (tally[(kind, what, True)], n)
    print("\nchart reader on 20 groups (seed 7): " + json.dumps({k: f"{a}/{b}" for k, (a, b) in figures.items()}))
    for key, (good, n) in figures.items():
        kind, what = key.split()
        if what in ("M", "I"):
            assert good >= 0.95 * n, key
        elif kind in ("vbar", "hbar"):
            assert good >= 0.80 * n, key
    bar_views = sum(n for key, (_, n) in figures.items() if key.split()[0] in ("vbar", "hbar"))
    assert bar_views >= 15  # the build has bar charts to judge


def test_no_leak_on_a_genuine_build(bench: Path, ocr: Ocr) -> None:
    checked, leaks = audit_leaks(bench, ocr=ocr)
    assert checked == 20 and leaks == []


def test_leaking_designed_faults_are_found(bench: Path, ocr: Ocr) -> None:
    table = audit_fault_leaks(bench, max_views=4, ocr=ocr, kinds=(*LEAKING_FAULTS, "out_of_axis", "tampered_image"))
    print("\nleaks in designed faults: " + json.dumps(table))
    assert table["value_label_leak"] == [4, 4]
    assert table["line_leak"] == [4, 4]
    assert table["genuine"] == [4, 0]
    # faults that break a certificate without showing the value: the saved image is the genuine masked one
    assert table["out_of_axis"] == [4, 0]
    assert table["tampered_image"] == [4, 0]


def test_cli_audit_leaks_exit_codes(
    bench: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(monkeypatch, "audit-leaks", str(bench), "--max-views", "3") == 0
    assert "3 masked views read with the mask ignored; 0 hidden values recovered" in capsys.readouterr().out
    assert run_cli(monkeypatch, "audit-leaks", str(tmp_path / "missing")) == 2  # a user error, one line
    assert "benchmark folder not found" in capsys.readouterr().err
