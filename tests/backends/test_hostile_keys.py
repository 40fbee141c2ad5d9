"""The API key is masked before any cut, everywhere an error body is recorded or printed.

Before the fix the error body was cut to 300 characters and then the whole key was replaced: a key across the
cut survived in part (up to 28 characters reached ``responses.sqlite`` and stderr).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vqaudit.backends import ModelOptions
from vqaudit.backends.redact import MASK, MIN_RUN, mask_secret
from vqaudit.run import load_responses, run_benchmark
from vqaudit.store import load_benchmark

KEY = "sk-proj-Q7x9TzLmN2vB4cR8wY1kH6jD3fG5sA0e"  # 40 characters, like a real key
KEY_ENV = "VQAUDIT_TEST_API_KEY"
OPTIONS: dict[str, Any] = {"api_key_env": KEY_ENV, "max_retries": 1, "backoff_base_s": 0.001, "timeout_s": 5.0}


def leaked(text: str | bytes, key: str = KEY) -> list[str]:
    """Every run of MIN_RUN consecutive key characters found in ``text``."""
    data = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    return [key[i : i + MIN_RUN] for i in range(len(key) - MIN_RUN + 1) if key[i : i + MIN_RUN] in data]


def test_mask_secret_by_hand() -> None:
    assert (MIN_RUN, MASK) == (8, "***")
    assert mask_secret(f"Bearer {KEY}.", KEY) == "Bearer ***."
    assert mask_secret(f"cut here: {KEY[:12]}", KEY) == "cut here: ***"  # the part before a cut
    assert mask_secret(f"{KEY[-9:]} was the tail", KEY) == "*** was the tail"
    assert mask_secret(f"{KEY[:7]}|{KEY[7:14]}", KEY) == f"{KEY[:7]}|{KEY[7:14]}"  # 7 characters: kept
    assert mask_secret(f"a{KEY}{KEY}b {KEY[5:20]} c", KEY) == "a***b *** c"
    assert mask_secret("short key abc here", "abc") == "short key *** here"  # under 8: the whole key
    assert mask_secret("nothing to see", KEY) == "nothing to see"
    assert mask_secret("anything", None) == "anything"


@pytest.mark.parametrize("shift", [3, 12, 28, 39])
def test_key_across_the_300_character_cut_is_not_recorded(
    make_bench: Callable[..., Path], tmp_path: Path, hostile: Any, monkeypatch: pytest.MonkeyPatch, shift: int
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    bench = make_bench(1, 2)
    view = load_benchmark(bench).views[0]
    # message "HTTP 500 from URL: " + snippet; the body is {"error": "xxx...", "authorization": "Bearer KEY", ...}
    # place the key so the 300-character snippet ends `shift` characters into it
    hostile.echo_pad = 300 - shift - len('{"error": "') - len('", "authorization": "Bearer ')
    hostile.faults = {view.image_sha256: ["echo500"] * 2}
    out = tmp_path / "run"
    summary = run_benchmark(bench, f"openai:m@{hostile.url}", out, progress=False, options=ModelOptions(**OPTIONS))
    assert summary.n_errors == 1
    error = load_responses(out)[view.view_id].error or ""
    assert error.startswith(f"failed after 2 attempts: HTTP 500 from {hostile.url}/chat/completions: ")
    assert "Bearer ***" in error  # the key was there, before the cut, and is masked
    assert leaked(error) == []
    for path in out.rglob("*"):
        if path.is_file():
            assert leaked(path.read_bytes()) == [], path
    assert hostile.auth_headers[0] == f"Bearer {KEY}"  # the key was really sent


def test_fatal_401_echo_printed_by_the_cli_holds_no_key(
    make_bench: Callable[..., Path], tmp_path: Path, hostile: Any
) -> None:
    bench = make_bench(1, 1)
    hostile.echo_pad = 300 - 20 - len('{"error": "') - len('", "authorization": "Bearer ')
    hostile.default = "echo401"
    out = tmp_path / "run"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "vqaudit",
            "run",
            str(bench),
            "--model",
            f"openai:m@{hostile.url}",
            "--out",
            str(out),
            "--api-key-env",
            KEY_ENV,
        ],
        capture_output=True,
        text=True,
        env={**os.environ, KEY_ENV: KEY},
        timeout=300,
    )
    assert proc.returncode == 2
    assert "HTTP 401" in proc.stderr and "Bearer ***" in proc.stderr
    assert leaked(proc.stderr) == [] and leaked(proc.stdout) == []
    for path in out.rglob("*"):
        if path.is_file():
            assert leaked(path.read_bytes()) == [], path
