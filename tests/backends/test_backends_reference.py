from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from vqaudit.backends import (
    Backend,
    BackendCallError,
    GenerationParams,
    ModelOptions,
    Request,
    load_backend,
    valid_specs,
)
from vqaudit.errors import VqauditError
from vqaudit.schema import View
from vqaudit.store import load_benchmark


def _ask(backend: Backend, view: View) -> str:
    request = Request(view.view_id, "p", "prompt", b"", "image/png", GenerationParams(), obligation=view.obligation)
    return asyncio.run(backend.complete(request))


@pytest.fixture
def views(make_bench: Callable[..., Path]) -> list[View]:
    return list(load_benchmark(make_bench()).views)


def test_generation_params_defaults() -> None:
    assert GenerationParams().as_dict() == {"temperature": 0.0, "max_tokens": 512}


def test_always_answer_exact_reply(views: list[View]) -> None:
    backend = load_backend("reference:always-answer")
    assert backend.spec == "reference:always-answer"
    for view in views:
        assert _ask(backend, view) == (
            '{"answerable": true, "answer": "0", "reason": "reference policy: always answers with a fixed guess"}'
        )


def test_always_abstain(views: list[View]) -> None:
    backend = load_backend("reference:always-abstain")
    for view in views:
        reply = json.loads(_ask(backend, view))
        assert reply["answerable"] is False
        assert reply["answer"] is None
        assert reply["reason"]


def test_gold_answers_gold_and_abstains_on_negatives(views: list[View]) -> None:
    backend = load_backend("reference:gold")
    seen_answer = seen_abstain = 0
    for view in views:
        reply = json.loads(_ask(backend, view))
        assert reply["reason"] == "reference:gold oracle \u2014 a check of the scoring path, not a model"
        if view.obligation.kind == "answer":
            seen_answer += 1
            # conftest: group g's supported view has gold "10*g"
            assert reply == {"answerable": True, "answer": str(10 * int(view.group_id[1:])), "reason": reply["reason"]}
        else:
            seen_abstain += 1
            assert reply["answerable"] is False and reply["answer"] is None
    assert (seen_answer, seen_abstain) == (3, 6)


@pytest.mark.parametrize(
    "spec",
    ["", "reference", "reference:", "reference:nope", "openai:model", "openai:model@ftp://x", "mystery:thing"],
)
def test_bad_spec_lists_valid_forms(spec: str) -> None:
    with pytest.raises(VqauditError) as info:
        load_backend(spec)
    message = str(info.value)
    assert "Valid forms" in message
    for form in valid_specs():
        assert form in message


def test_model_args_are_refused_where_they_do_not_apply() -> None:
    # one message for an unknown key whatever the backend (ModelArgs.finish, as hf: and vllm: refuse theirs)
    with pytest.raises(VqauditError) as info:
        load_backend("reference:gold", ModelOptions(args=(("dtype", "bfloat16"),)))
    assert str(info.value) == "model spec 'reference:gold': unknown --model-arg dtype; this backend takes none"
    with pytest.raises(VqauditError) as info:
        load_backend("openai:m@http://127.0.0.1:9/v1", ModelOptions(args=(("b", "1"), ("a", "2"))))
    assert str(info.value) == (
        "model spec 'openai:m@http://127.0.0.1:9/v1': unknown --model-arg a, b; this backend takes none"
    )


def test_the_cli_reads_model_args_with_the_one_parser() -> None:
    from vqaudit.cli.options import model_options

    assert model_options(args=["device=cpu", "dtype=float32"]).args == (("device", "cpu"), ("dtype", "float32"))
    with pytest.raises(VqauditError) as info:
        model_options(args=["device=cpu", "device=cuda"])
    assert str(info.value) == "--model-arg 'device=cuda': key 'device' is given twice ('cpu' and 'cuda')"


def test_openai_spec_parsing() -> None:
    backend = load_backend("openai:Qwen/Qwen2-VL-7B-Instruct@http://127.0.0.1:8000/v1/", ModelOptions(concurrency=3))
    assert backend.spec == "openai:Qwen/Qwen2-VL-7B-Instruct@http://127.0.0.1:8000/v1/"
    assert backend.model == "Qwen/Qwen2-VL-7B-Instruct"  # type: ignore[attr-defined]
    assert backend.url == "http://127.0.0.1:8000/v1/chat/completions"  # type: ignore[attr-defined]
    # a model name containing '@' keeps everything up to the last '@http'
    backend = load_backend("openai:org/m@v2@https://api.example.com/v1")
    assert backend.model == "org/m@v2"  # type: ignore[attr-defined]


def test_replay_backend(tmp_path: Path, views: list[View]) -> None:
    path = tmp_path / "replies.jsonl"
    rows = [{"view_id": v.view_id, "text": f"reply {v.view_id}", "model": "x"} for v in views[:-2]]
    rows.append({"view_id": views[-2].view_id, "text": None, "error": "HTTP 500"})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n")
    backend = load_backend(f"replay:{path}")
    for view in views[:-2]:
        assert _ask(backend, view) == f"reply {view.view_id}"
    with pytest.raises(BackendCallError, match="no reply text"):
        _ask(backend, views[-2])
    with pytest.raises(BackendCallError, match="has no reply for view"):
        _ask(backend, views[-1])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"view_id": "a", "text": "x"}\nnot json\n', "row 2: not valid JSON"),
        ("[1, 2]\n", "row 1: expected a JSON object"),
        ('{"view_id": 3, "text": "x"}\n', "row 1, field 'view_id'"),
        ('{"view_id": "a", "text": 3}\n', "row 1, field 'text'"),
        ('{"view_id": "a", "text": "x"}\n{"view_id": "a", "text": "y"}\n', "row 2, field 'view_id': duplicate"),
    ],
)
def test_replay_file_errors_name_row_and_field(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(content)
    with pytest.raises(VqauditError, match=message):
        load_backend(f"replay:{path}")


def test_replay_missing_file(tmp_path: Path) -> None:
    with pytest.raises(VqauditError, match="replay file not found"):
        load_backend(f"replay:{tmp_path / 'none.jsonl'}")


def test_reference_and_replay_answer_text_only_requests(tmp_path: Path, views: list[View]) -> None:
    # Judge requests carry no image; the reference policies and the replay file read only the view.
    def ask_text_only(backend: Backend, view: View) -> str:
        request = Request(
            view.view_id, "judge", "Judge this.", None, None, GenerationParams(), obligation=view.obligation
        )
        return asyncio.run(backend.complete(request))

    gold = load_backend("reference:gold")
    supported = views[0]  # conftest: group 0's supported view, gold "0"
    assert json.loads(ask_text_only(gold, supported))["answer"] == "0"
    path = tmp_path / "verdicts.jsonl"
    path.write_text(json.dumps({"view_id": supported.view_id, "text": "yes"}) + "\n")
    assert ask_text_only(load_backend(f"replay:{path}"), supported) == "yes"
