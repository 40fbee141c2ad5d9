"""`vqaudit perturb` output folders: the user's own files and another model's run are never overwritten.

The rules of an audit folder (docs/shortanswer.md "The output folder"), for the perturbation run: a new user's
second run with another `--model-name` into the same `--out` silently replaced the first model's
`perturbations.json` (which `audit-summary` then read under the new name), and a `perturbations.md` of their own
was overwritten. A rerun of the same model and benchmark reuses the folder (its cached replies).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shortanswer.helpers import gap_perturb_args, run_cli
from vqaudit.folder_lock import folder_lock


def _args(tmp: Path, out: Path, name: str) -> list[str]:
    args = gap_perturb_args(tmp, missing=(), wrong=())
    return [*args[: args.index("--out")], "--out", str(out), "--model-name", name]


def test_another_models_run_is_refused_and_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "perturb"
    assert run_cli(monkeypatch, *_args(tmp_path, out, "m1")) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.suffix in (".json", ".md")}
    assert json.loads(before["perturbations.json"])["model"] == "m1"
    capsys.readouterr()
    assert run_cli(monkeypatch, *_args(tmp_path, out, "m2")) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: {out}: holds the perturbation run of 'm1' on 'docvqa'; this one ('m2' on 'docvqa') would "
        "overwrite it: choose another --out"
    )
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.suffix in (".json", ".md")} == before
    assert run_cli(monkeypatch, *_args(tmp_path, out, "m1")) == 0  # the same model again: its own folder


@pytest.mark.parametrize("name", ["perturbations.md", "perturbations.json", "replies.json"])
def test_the_users_own_file_is_refused(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "notes"
    out.mkdir()
    (out / name).write_text("my own notes\n")
    capsys.readouterr()
    assert run_cli(monkeypatch, *_args(tmp_path, out, "m1")) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {out / name}: exists and ") and err.endswith("choose another --out")
    assert len(err.splitlines()) == 1
    assert (out / name).read_text() == "my own notes\n"
    assert not (out / "responses.sqlite").exists()  # refused before the first model call


def test_a_folder_another_process_writes_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "busy"
    with folder_lock(out, "vqaudit perturb other.jsonl", kind="perturbation folder"):
        capsys.readouterr()
        assert run_cli(monkeypatch, *_args(tmp_path, out, "m1")) == 2
    err = capsys.readouterr().err.strip()
    assert "vqaudit perturb other.jsonl" in err and "is writing this perturbation folder" in err
    assert not (out / "perturbations.json").exists()
