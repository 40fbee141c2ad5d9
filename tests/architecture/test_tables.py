"""A new backend (an HTTP provider too) and a new source are one module and one row each; runs survive a move.

The toy source and the toy backend below are written as the files a contributor would add (one module each),
imported from a folder on ``sys.path``, and registered with one line each. Expected values are computed by hand
from the definitions in docs/metrics.md.
"""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from vqaudit.backends import BACKENDS, BackendKind, register_backend
from vqaudit.errors import VqauditError
from vqaudit.suites.registry import SOURCES, Source, register_source

TOY_SOURCE = '''
"""A toy source: two groups, each one supported view (gold "3") and one view whose evidence is gone."""
from pathlib import Path

from pydantic import BaseModel

from vqaudit.schema import Group, Obligation, View
from vqaudit.files import sha256_bytes
from vqaudit.suites.answerability import diagnostics, metrics, prompt, score, summary_line
from vqaudit.suites.common import GroupBuild, build_benchmark

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360f80f0000010100005d0a2db40000000049454e44ae426082")


class Options(BaseModel):
    groups: int = 2
    seed: int = 0


def _group(g: int) -> GroupBuild:
    gid = f"toy-{g}"
    views = (
        View(view_id=f"{gid}-a", group_id=gid, source="toy", state="original", image=f"{gid}-a.png",
             image_sha256=sha256_bytes(PNG), question="How many?", obligation=Obligation(kind="answer", gold=("3",),
                                                                                          answer_type="number")),
        View(view_id=f"{gid}-m", group_id=gid, source="toy", state="M", image=f"{gid}-m.png",
             image_sha256=sha256_bytes(PNG), question="How many?", obligation=Obligation(kind="abstain")),
    )
    group = Group(group_id=gid, source="toy", question="How many?", view_ids=tuple(v.view_id for v in views))
    return GroupBuild(group=group, views=views, images={v.image: PNG for v in views})


def build(out: Path, options: Options, *, workers: int = 1, on_group=None):
    return build_benchmark(out, "toy", (_group(g) for g in range(options.groups)),
                           lambda groups, views: {"seed": options.seed, "n_groups": len(groups),
                                                  "n_views": len(views)}, on_group)


def verify(bench_dir, views, groups, missing, *, workers):
    return []


def checked(views, groups):
    return {}
'''

TOY_BACKEND = '''
"""A toy backend: abstains on everything, in the answerability contract."""
import json


class ToyBackend:
    def __init__(self, spec):
        self.spec = spec

    async def complete(self, request):
        return json.dumps({"answerable": False, "answer": None, "reason": "toy: sees nothing"})

    async def aclose(self):
        pass


def load(spec, target, options):
    options.refuse_unknown_args(spec, ())
    return ToyBackend(spec)
'''


TOY_HTTP = '''
"""A toy HTTP provider: the template's hooks for a made-up JSON API, POST {URL}/answer with an x-toy-key header."""
import base64

from vqaudit.backends.http_base import HttpBackend
from vqaudit.backends.http_spec import load_http
from vqaudit.backends.http_replies import MalformedBody, count


class ToyHttpBackend(HttpBackend):
    kind = "toyhttp"

    def path(self):
        return "/answer"

    def headers(self, api_key):
        return {} if api_key is None else {"x-toy-key": api_key}

    def body(self, request):
        image = None if request.image is None else base64.b64encode(request.image).decode("ascii")
        return {"model": self.model, "question": request.prompt, "png_base64": image,
                "limit": request.params.max_tokens}

    def read_content(self, data):
        output = data.get("output")
        if not isinstance(output, dict):
            raise MalformedBody("no output object")
        return output.get("answer")

    def read_reasoning(self, data):
        return data.get("thoughts") or None

    def read_finish_reason(self, data):
        return "length" if data.get("stopped") == "limit" else data.get("stopped")

    def read_usage(self, data):
        counts = data.get("counts") or {}
        kept = {"prompt_tokens": count(counts.get("in")), "completion_tokens": count(counts.get("out"))}
        return {k: v for k, v in kept.items() if v is not None} or None


def load(spec, target, options):
    return load_http(ToyHttpBackend, spec, target, options)
'''


@pytest.fixture
def plugins(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "toy_source.py").write_text(textwrap.dedent(TOY_SOURCE), encoding="utf-8")
    (folder / "toy_backend.py").write_text(textwrap.dedent(TOY_BACKEND), encoding="utf-8")
    (folder / "toy_http.py").write_text(textwrap.dedent(TOY_HTTP), encoding="utf-8")
    sys.path.insert(0, str(folder))
    try:
        yield folder
    finally:
        sys.path.remove(str(folder))
        SOURCES.pop("toy", None)
        BACKENDS.pop("toy", None)
        BACKENDS.pop("toyhttp", None)
        for name in ("toy_source", "toy_backend", "toy_http"):
            sys.modules.pop(name, None)


def _eval(monkeypatch: pytest.MonkeyPatch, out: Path, *models: str) -> int:
    from shortanswer.helpers import run_cli

    args = ["eval", "toy", "--out", str(out), "--draws", "200"]
    for m in models:
        args += ["--model", m]
    return run_cli(monkeypatch, *args)


def test_a_toy_source_and_a_toy_backend_are_one_module_and_one_row_each(
    plugins: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_source(Source("toy", "toy_source", (("groups", 2),), "a toy source"))  # the one line of the source
    register_backend(BackendKind("toy", "toy_backend", ("toy:ANYTHING",)))  # the one line of the backend
    assert _eval(monkeypatch, tmp_path / "eval", "toy:x", "reference:gold") == 0
    toy = json.loads((tmp_path / "eval" / "runs" / "toy_x" / "metrics.json").read_text())["toy"]
    # Always abstaining: both supported views rejected (supported_rejection 1), both missing views abstained
    # (EU 0); every group has a wrong decision, so Bk = Jk = 0; decision accuracy 2 of 4 views.
    assert (toy["supported_rejection"], toy["EU"], toy["Bk"], toy["Jk"]) == (1.0, 0.0, 0.0, 0.0)
    assert toy["decision_accuracy"] == 0.5 and toy["n_groups"] == 2 and toy["n_views"] == 4
    gold = json.loads((tmp_path / "eval" / "runs" / "reference_gold" / "metrics.json").read_text())["toy"]
    assert (gold["Jk"], gold["Bk"], gold["supported_rejection"]) == (1.0, 1.0, 0.0)  # the oracle gets all right


def test_a_toy_http_provider_is_one_module_of_hooks_and_one_row(
    plugins: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fixture_modules import FIXTURES, load_fixture_module
    from shortanswer.helpers import run_cli
    from vqaudit.cli.build import build_source
    from vqaudit.run import load_responses

    register_source(Source("toy", "toy_source", (("groups", 2),), "a toy source"))
    # the one line of the provider: its module, its spec form, its key variable, several endpoints, its settings
    register_backend(
        BackendKind(
            "toyhttp",
            "toy_http",
            ("toyhttp:MODEL@URL",),
            key_env=("TOY_HTTP_KEY",),
            endpoints=True,
            generation=("max_tokens",),
        )
    )
    monkeypatch.setenv("TOY_HTTP_KEY", "toy-secret-0123456789")
    reply = {
        "output": {"answer": json.dumps({"answerable": True, "answer": "3", "reason": "a toy reads 3"})},
        "thoughts": "three bars",
        "stopped": "done",
        "counts": {"in": 40, "out": 12},
    }
    module = load_fixture_module("provider_server", FIXTURES / "provider_server.py")
    servers = [module.ProviderServer(lambda seen: (200, reply)).start() for _ in range(2)]
    try:
        bench = tmp_path / "bench"
        build_source("toy", bench, {"groups": 2})
        out = tmp_path / "run"
        assert (
            run_cli(
                monkeypatch,
                "run",
                str(bench),
                "--model",
                f"toyhttp:m@{servers[0].url}",
                "--endpoint",
                servers[1].url,
                "--model-arg",
                "max_tokens=64",
                "--out",
                str(out),
            )
            == 0
        )
        assert run_cli(monkeypatch, "score", str(out), "--draws", "200") == 0
    finally:
        for server in servers:
            server.stop()
    seen = servers[0].seen + servers[1].seen
    # the four toy views share one image and one question: one cache key, asked once
    assert len(seen) == 1
    assert seen[0].path == "/v1/answer" and seen[0].headers["x-toy-key"] == "toy-secret-0123456789"
    assert seen[0].body["model"] == "m" and seen[0].body["limit"] == 64
    assert seen[0].body["png_base64"] is not None and seen[0].body["question"].find("How many?") >= 0
    info = json.loads((out / "run.json").read_text())
    assert info["model"] == f"toyhttp:m@{servers[0].url},{servers[1].url}"
    # the toy API reports no reasoning tokens: None (not reported), never 0
    assert info["usage"] == {"prompt_tokens": 40, "completion_tokens": 12, "reasoning_tokens": None, "replies": 1}
    response = next(iter(load_responses(out).values()))
    assert (response.reasoning, response.finish_reason, response.usage) == (
        "three bars",
        "done",
        {"prompt_tokens": 40, "completion_tokens": 12},
    )
    toy = json.loads((out / "metrics.json").read_text())["toy"]
    # Always answering "3": both supported views right, both missing views answered instead of abstaining; every
    # group has a wrong decision, so Jk = 0; decision accuracy 2 of 4 views, no supported view rejected.
    assert (toy["Jk"], toy["decision_accuracy"], toy["supported_rejection"]) == (0.0, 0.5, 0.0)


def test_a_backend_kind_needing_a_missing_extra_names_it(plugins: Path) -> None:
    from vqaudit.backends import load_backend

    (plugins / "needs_extra.py").write_text("import not_installed_anywhere_xyz\n", encoding="utf-8")
    register_backend(BackendKind("toy", "needs_extra", ("toy:X",), extra="toyextra"))
    with pytest.raises(VqauditError, match=r"pip install 'vqaudit\[toyextra\]'"):
        load_backend("toy:x")
    sys.modules.pop("needs_extra", None)


@pytest.mark.slow
def test_a_run_scored_after_moving_both_folders_gives_identical_metrics(tmp_path: Path) -> None:
    from vqaudit.run import run_benchmark
    from vqaudit.score import score_run
    from vqaudit.suites.charts.build import build_charts

    here = tmp_path / "here"
    build_charts(here / "bench", 3, seed=5)
    run_benchmark(here / "bench", "reference:always-answer", here / "runs" / "a", progress=False)
    score_run(here / "runs" / "a", n_draws=500)
    before = (here / "runs" / "a" / "metrics.json").read_bytes()
    there = tmp_path / "elsewhere" / "copy"
    shutil.copytree(here, there)
    shutil.rmtree(here)  # the absolute path recorded in run.json is gone: the relative path finds the benchmark
    score_run(there / "runs" / "a", n_draws=500)
    assert (there / "runs" / "a" / "metrics.json").read_bytes() == before
    # only the run moved: --bench says where the benchmark is, checked by its manifest hash
    lone = tmp_path / "lone-run"
    shutil.move(str(there / "runs" / "a"), lone)
    with pytest.raises(VqauditError, match="--bench"):
        score_run(lone, n_draws=500)
    score_run(lone, n_draws=500, bench=there / "bench")
    assert (lone / "metrics.json").read_bytes() == before
    # a different benchmark under --bench is refused
    build_charts(tmp_path / "other", 3, seed=6)
    with pytest.raises(VqauditError, match="not the one run"):
        score_run(lone, n_draws=500, bench=tmp_path / "other")
