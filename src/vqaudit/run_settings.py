"""What the run stage is given and gives back: its settings, its summary, the earlier-run check, its requests.

The check refuses a run folder whose earlier run (``run.json``) was of another model, benchmark, shard or kind
(blind or with images); a view becomes one backend request, its image's MIME type sniffed from its bytes.

The run loop itself, which asks the backend and caches each reply, is :mod:`vqaudit.run`; it re-exports
:class:`RunSettings`, :class:`RunSummary` and :func:`image_mime`, so callers import them from there.
"""

from __future__ import annotations

import dataclasses
import mimetypes
from dataclasses import dataclass
from pathlib import Path

from vqaudit.backends import GenerationParams, ModelOptions, Request
from vqaudit.errors import VqauditError
from vqaudit.executors import Executor
from vqaudit.schema import View
from vqaudit.store import RunFolder, RunUsage


@dataclass(frozen=True)
class RunSummary:
    """What one invocation of the run stage did.

    Attributes:
        n_views: views in the benchmark (in the shard, for a ``--shard`` run).
        n_cached: views whose reply (or recorded error) was already in the cache and was not asked again.
        n_asked: backend calls made by this invocation (one per distinct cache key asked).
        n_errors: views whose stored response records an error at the end of the run.
        out_dir: the run folder.
        endpoints_out: endpoints of the model taken out of rotation during this invocation: URL -> error.
        usage: token counts summed over the cache rows of the run's views (``run.json`` ``usage``), or None when
            no reply reported usage.
    """

    n_views: int
    n_cached: int
    n_asked: int
    n_errors: int
    out_dir: Path
    endpoints_out: dict[str, str] = dataclasses.field(default_factory=dict)
    usage: RunUsage | None = None


@dataclass(frozen=True)
class RunSettings:
    """How one ``vqaudit run`` asks: the settings :func:`vqaudit.run.run_benchmark` takes as keywords (see its Args)."""

    concurrency: int = 8
    retry_errors: bool = False
    progress: bool = True
    options: ModelOptions | None = None
    executor: Executor | None = None
    replicas: int | None = None
    shard: tuple[int, int] | None = None
    blind: bool = False


def image_mime(data: bytes, path: Path) -> str:
    """Return the MIME type of image bytes: sniffed from the magic bytes, else guessed from the file name.

    Args:
        data: the image file's bytes.
        path: the image file's path (only its suffix is used, as a fallback).

    Returns:
        e.g. ``image/png``; ``application/octet-stream`` when neither the bytes nor the suffix tell.
    """
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return mimetypes.guess_type(path.name)[0] or "application/octet-stream"


def _check_previous_run(
    folder: RunFolder, model_spec: str, manifest_sha256: str, shard: str | None, blind: bool = False
) -> None:
    folder.check_files()  # a linked run.json or responses.sqlite would write through the link, outside the folder
    if not folder.info.exists():
        return
    previous = folder.read_info()
    if previous.blind != blind:
        held, asked = ("a blind run (no images)" if b else "a run with images" for b in (previous.blind, blind))
        raise VqauditError(
            f"{folder.root} already holds {held}, not {asked}; use another output folder (a blind "
            "and a sighted run of one model are two run folders)"
        )
    if previous.merged_from:
        raise VqauditError(f"{folder.root} holds a run merged by `vqaudit merge`; run into another folder")
    if previous.shard != shard:
        held, asked = (f"shard {x}" if x else "the whole benchmark" for x in (previous.shard, shard))
        raise VqauditError(
            f"{folder.root} already holds a run of {held}, not {asked}; use another output folder "
            "(one run folder per shard; `vqaudit merge` joins them)"
        )
    if previous.model != model_spec:
        raise VqauditError(
            f"{folder.root} already holds a run of model {previous.model!r}, not {model_spec!r}; "
            "use another output folder (one run folder holds one model on one benchmark)"
        )
    if previous.benchmark_manifest_sha256 != manifest_sha256:
        raise VqauditError(
            f"{folder.root} already holds a run on another benchmark ({previous.benchmark}, manifest sha256 "
            f"{previous.benchmark_manifest_sha256}); use another output folder"
        )


def _request(view: View, prompt_id: str, prompt: str, image_path: Path | None, params: GenerationParams) -> Request:
    if image_path is None:  # a blind run: the prompt alone, a text-only request
        return Request(
            request_id=view.view_id,
            prompt_id=prompt_id,
            prompt=prompt,
            image=None,
            image_mime=None,
            params=params,
            obligation=view.obligation,
        )
    image = image_path.read_bytes()
    return Request(
        request_id=view.view_id,
        prompt_id=prompt_id,
        prompt=prompt,
        image=image,
        image_mime=image_mime(image, image_path),
        params=params,
        obligation=view.obligation,
    )
