"""inspect_ai: a benchmark as a JSONL dataset of samples with a task file, and inspect_ai eval logs read back.

Export (the sample fields of ``inspect_ai.dataset.json_dataset``):

- ``samples.jsonl``: one sample per view, in ``views.jsonl`` order: ``id`` (the view id), ``input`` (one user
  message whose content is the image, as a ``data:`` URL of the image file's bytes, then the full vqaudit prompt
  as text), ``target`` (the gold answers; empty for a view that must abstain) and ``metadata`` (``group_id``,
  ``state``, ``source``, ``obligation``, ``prompt_id``, ``index``);
- ``task.py``: an ``@task`` function ``NAME`` with the dataset, the ``generate()`` solver, no scorer (vqaudit
  scores) and ``GenerateConfig(temperature=0.0, max_tokens=512)``;
- ``README.md``: the commands.

Import: an inspect_ai log, ``.json`` (``--log-format json``; read here, no inspect_ai needed) or ``.eval`` (the
default zip format, zstd-compressed by current versions: read with ``inspect_ai.log.read_eval_log``, the
``[inspect]`` extra). Each sample's ``id`` is its view; the reply is ``output.completion``; a sample with an
``error`` records that error. A log of several epochs is refused (a run holds one reply per view).
"""

from __future__ import annotations

import base64
import json
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.files import atomic_write_text
from vqaudit.harness.common import GENERATION, Prediction, check_view_id, export_rows
from vqaudit.harness.view_index import ViewIndex
from vqaudit.store import Benchmark
from vqaudit.textsafe import decode_lenient

SAMPLES_FILE = "samples.jsonl"
TASK_FILE = "task.py"

TASK = '''"""A vqaudit benchmark as an inspect_ai task (written by `vqaudit export --to inspect`).

Run, from this folder: inspect eval task.py --model PROVIDER/MODEL (inspect_ai 0.3.285 refuses an absolute
task path: NotImplementedError "Non-relative patterns are unsupported"). There is no scorer: import the log with
`vqaudit import-predictions LOG --bench BENCH --format inspect --out RUN` and score the run with vqaudit.
"""

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import json_dataset
from inspect_ai.model import GenerateConfig
from inspect_ai.solver import generate


@task
def {name}() -> Task:
    """Every view of the benchmark, asked once with vqaudit's prompt and generation settings."""
    return Task(
        dataset=json_dataset(str(Path(__file__).resolve().parent / "{samples}")),
        solver=generate(),
        config=GenerateConfig(temperature={temperature!r}, max_tokens={max_tokens}),
        epochs=1,
    )
'''


def export(bench: Benchmark, out: Path, *, final: Path, name: str) -> list[Path]:
    """Write ``samples.jsonl``, ``task.py`` and ``README.md`` into ``out``; return the files written.

    Args:
        bench: the benchmark.
        out: the (staged) folder to write into.
        final: where ``out`` will be when the export is complete (named in the README).
        name: the task function's name.
    """
    lines: list[str] = []
    for row in export_rows(bench):
        view = row.view
        url = f"data:{row.image_mime};base64,{base64.b64encode(row.image).decode('ascii')}"
        sample = {
            "id": view.view_id,
            "input": [
                {"role": "user", "content": [{"type": "image", "image": url}, {"type": "text", "text": row.prompt}]}
            ],
            "target": list(view.obligation.gold),
            "metadata": {
                "group_id": view.group_id,
                "state": view.state,
                "source": view.source,
                "obligation": view.obligation.kind,
                "prompt_id": row.prompt_id,
                "index": row.index,
            },
        }
        lines.append(json.dumps(sample, ensure_ascii=True))
    atomic_write_text(out / SAMPLES_FILE, "".join(line + "\n" for line in lines))
    atomic_write_text(
        out / TASK_FILE,
        TASK.format(
            name=name, samples=SAMPLES_FILE, temperature=GENERATION.temperature, max_tokens=GENERATION.max_tokens
        ),
    )
    atomic_write_text(out / "README.md", readme(name, final))
    return [out / SAMPLES_FILE, out / TASK_FILE, out / "README.md"]


def readme(name: str, final: Path) -> str:
    """The export's README: the inspect command and the import."""
    return f"""# {name}: a vqaudit benchmark as an inspect_ai task

Written by `vqaudit export --to inspect`: `{SAMPLES_FILE}` (one sample per view, the image as a data URL) and
`{TASK_FILE}` (task `{name}`: `generate()`, temperature 0, at most 512 new tokens, no scorer).

1. Run it with any inspect_ai model, e.g. an OpenAI-compatible server (vLLM, SGLang, Ollama):

       cd {final}   # inspect_ai takes the task file by a relative path
       VLLM_BASE_URL=http://127.0.0.1:8000/v1 VLLM_API_KEY=none \\
           inspect eval {TASK_FILE} --model openai-api/vllm/Qwen/Qwen2.5-VL-7B-Instruct --log-dir logs/

2. Import the log (`.eval`, or `.json` with `--log-format json`) and score it:

       vqaudit import-predictions logs/LOG.eval --bench BENCH --format inspect --out runs/MODEL
       vqaudit score runs/MODEL

   Reading a `.eval` log needs inspect_ai (`pip install 'vqaudit[inspect]'`); a `.json` log does not.
"""


def read(path: Path, bench: Benchmark) -> list[Prediction]:
    """The samples of an inspect_ai log, each mapped to its view.

    Raises:
        VqauditError: the file is missing or not an inspect_ai log, a log of no samples, a ``.eval`` log without
            inspect_ai installed, a sample id naming no view of the benchmark, a sample seen in two epochs, or a
            reply that is not text (naming the file, the 1-based sample and the field).
    """
    return list(predictions(path, ViewIndex.of_benchmark(bench)))


def predictions(path: Path, views: ViewIndex) -> Iterator[Prediction]:
    """:func:`read`'s samples one at a time (what ``import-predictions`` consumes).

    A ``.json`` log is one JSON object, read whole; a ``.eval`` log (a zip archive of one member per sample) is
    read a chunk of samples at a time (:func:`_eval_samples`), each reduced to its id, epoch, completion and error.

    Raises:
        VqauditError: as :func:`read`, at the first refused sample; the samples before it have been yielded.
    """
    samples = _eval_samples(path) if path.suffix.lower() == ".eval" else _json_samples(path)
    if not samples:
        raise VqauditError(f"{path}: no samples (an empty inspect_ai log)")
    ids = views
    for row, sample in enumerate(_released(samples), start=1):
        if not isinstance(sample, dict):
            raise VqauditError(f"{path}: row {row}: expected a JSON object")
        epoch = sample.get("epoch", 1)
        if epoch != 1:
            raise VqauditError(
                f"{path}: row {row}, field 'epoch': {epoch!r}; vqaudit takes one reply per view "
                "(run the task with --epochs 1)"
            )
        sample_id = sample.get("id")
        view_id = check_view_id(path, ids, row, "id", str(sample_id) if isinstance(sample_id, int) else sample_id)
        error = sample.get("error")
        if error:
            message = error.get("message") if isinstance(error, dict) else error
            yield Prediction(row=row, view_id=view_id, text=None, error=f"inspect_ai: {message}")
            continue
        output = sample.get("output")
        completion = output.get("completion", "") if isinstance(output, dict) else None
        if not isinstance(completion, str):
            raise VqauditError(f"{path}: row {row}, field 'output.completion': expected the reply text")
        yield Prediction(row=row, view_id=view_id, text=completion)


def _released(samples: list[Any] | _ChunkedSamples) -> Iterator[Any]:
    """The samples in order; a list's items are let go as they are read (the log's JSON is not held twice)."""
    if not isinstance(samples, list):
        yield from samples
        return
    for i in range(len(samples)):
        sample, samples[i] = samples[i], None
        yield sample


def _json_samples(path: Path) -> list[Any]:
    if not path.is_file():
        raise VqauditError(f"{path}: file not found")
    try:
        data = json.loads(decode_lenient(path.read_bytes()))
    except (ValueError, RecursionError) as exc:
        raise VqauditError(f"{path}: not valid JSON: {exc}") from None
    samples = data.get("samples") if isinstance(data, dict) else None
    if not isinstance(samples, list):
        raise VqauditError(f"{path}: no 'samples' list (is it an inspect_ai log written with --log-format json?)")
    return samples


_CHUNK = 256
"""Samples of a ``.eval`` log read at once (one ``read_eval_log_samples_by_id`` call): the most held in memory."""

_EXCLUDED = frozenset({"messages", "events", "store", "attachments"})
"""Sample fields the import never reads, skipped while a ``.eval`` sample is parsed (the conversation, the event
transcript and the attachments: the image data URLs)."""


def _eval_samples(path: Path) -> list[Any] | _ChunkedSamples:
    """The samples of a ``.eval`` log as ``{"id", "epoch", "output": {"completion"}, "error": {"message"}}``.

    In ``inspect_ai.log.read_eval_log``'s order (its ``sort_samples``: by epoch, then id, an int id compared as
    its 20-digit zero-filled text), read :data:`_CHUNK` samples at a time when the log's header lists its sample
    ids and inspect_ai has ``read_eval_log_samples_by_id``; else read whole as ``read_eval_log`` reads it.

    Raises:
        VqauditError: the file is missing, inspect_ai is not installed, or the log cannot be read.
    """
    if not path.is_file():
        raise VqauditError(f"{path}: file not found")
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise VqauditError(
            f"{path}: reading a .eval log needs inspect_ai: pip install 'vqaudit[inspect]' (or "
            "convert it: inspect log convert --to json)"
        ) from None
    try:
        from inspect_ai.log import read_eval_log_samples_by_id
    except ImportError:  # an inspect_ai before the by-id reader: the log is read whole
        return _whole_eval(path)
    try:
        header = read_eval_log(str(path), header_only=True)
        with zipfile.ZipFile(path) as archive:
            names = {n for n in archive.namelist() if n.startswith("samples/") and n.endswith(".json")}
    except Exception as exc:  # noqa: BLE001 - inspect_ai raises many kinds on a bad file; each is a user error
        raise VqauditError(f"{path}: not a readable inspect_ai log: {type(exc).__name__}: {exc}") from None
    sample_ids = header.eval.dataset.sample_ids
    if sample_ids is None:  # an older log without the list of its samples: read whole
        return _whole_eval(path)
    epochs = header.eval.config.epochs or 1
    named = {f"samples/{i}_epoch_{e}.json": (i, e) for e in range(1, epochs + 1) for i in sample_ids}
    if not names <= named.keys():  # a sample the header does not list: read whole, as read_eval_log reads it
        return _whole_eval(path)
    keys = sorted(
        (named[n] for n in names), key=lambda k: (k[1], k[0] if isinstance(k[0], str) else str(k[0]).zfill(20))
    )
    return _ChunkedSamples(path, keys, read_eval_log_samples_by_id)


class _ChunkedSamples:
    """A ``.eval`` log's samples, :data:`_CHUNK` read at a time, each reduced to what the import reads."""

    def __init__(self, path: Path, keys: list[tuple[str | int, int]], read: Callable[..., list[Any]]) -> None:
        self.path = path
        self.keys = keys
        self.read = read

    def __len__(self) -> int:
        return len(self.keys)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for start in range(0, len(self.keys), _CHUNK):
            try:
                samples = self.read(str(self.path), self.keys[start : start + _CHUNK], exclude_fields=set(_EXCLUDED))
            except Exception as exc:  # noqa: BLE001 - as read_eval_log's refusals: one line naming the file
                raise VqauditError(f"{self.path}: not a readable inspect_ai log: {type(exc).__name__}: {exc}") from None
            for sample in samples:
                yield _compact(sample)


def _whole_eval(path: Path) -> list[Any]:
    from inspect_ai.log import read_eval_log

    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # noqa: BLE001 - inspect_ai raises many kinds on a bad file; each is a user error
        raise VqauditError(f"{path}: not a readable inspect_ai log: {type(exc).__name__}: {exc}") from None
    return [_compact(s) for s in (log.samples or [])]


def _compact(s: Any) -> dict[str, Any]:
    return {
        "id": s.id,
        "epoch": s.epoch,
        "output": {"completion": s.output.completion},
        "error": {"message": s.error.message} if s.error is not None else None,
    }
