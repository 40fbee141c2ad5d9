"""The documentation cites only what is in the repository (a reader can follow every citation).

Checked on README.md, CONTRIBUTING.md and docs/*.md: every relative link target exists; every backticked path
that starts with a top-level folder of the repository (``src/``, ``tests/``, ``docs/``, ``benchmarks/``,
``scripts/``) names existing files (``*`` and ``{a,b}`` patterns must match at least one); and no page points
outside the repository (``../``, an absolute ``/work/`` path, or the project-internal ``SPEC.md`` / ``STYLE.md``
and paper text files).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]
TOP = ("src/", "tests/", "docs/", "benchmarks/", "scripts/")
OUTSIDE = re.compile(r"\.\./|/work/|\bSPEC\.md\b|\bSTYLE\.md\b|seeds/\d{3}_")


def _expand(pattern: str) -> list[str]:
    match = re.search(r"\{([^{}]*)\}", pattern)
    if match is None:
        return [pattern]
    return [
        p
        for part in match.group(1).split(",")
        for p in _expand(pattern[: match.start()] + part + pattern[match.end() :])
    ]


def _exists(path: str) -> bool:
    return all(any(ROOT.glob(p)) if "*" in p else (ROOT / p).exists() for p in _expand(path.rstrip("/")))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_page_cites_only_files_in_the_repository(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if not re.match(r"[a-z]+:", target):  # not http(s):, mailto:
            assert (page.parent / target.split("#")[0]).exists(), f"{page.name}: link to missing {target}"
    for token in re.findall(r"`([^`\s]+)`", text):
        if token.startswith(TOP) and "NAME" not in token and "<" not in token:
            assert _exists(token), f"{page.name}: `{token}` is not in the repository"
    for n, line in enumerate(text.splitlines(), 1):
        assert not OUTSIDE.search(line), f"{page.name}:{n}: points outside the repository: {line.strip()}"


def test_the_checks_catch_a_missing_file() -> None:
    assert _exists("docs/papers.md") and _exists("tests/fixtures/scenes/images/CLEVR_train_*.png")
    assert _exists("tests/golden/audit_{chartqa,docvqa}.json")
    assert not _exists("tests/golden/audit_{chartqa,nosuch}.json") and not _exists("docs/nosuch.md")
    assert OUTSIDE.search("see `../shared/seeds/001_e4c0e886f438a08c.txt`") and not OUTSIDE.search("see papers.md")
