r"""lmms-eval: a benchmark as a task folder for ``--include_path``, and ``--log_samples`` files read back.

Export (a task as lmms-eval's ``ConfigurableTask`` reads it, e.g. its ``tasks/minerva`` task, whose data is also
a JSON file loaded by ``datasets``):

- ``NAME.yaml``: ``dataset_path: json`` with ``dataset_kwargs.data_files.test`` the absolute path of
  ``NAME.jsonl``, ``output_type: generate_until``, ``doc_to_visual`` / ``doc_to_text`` / ``doc_to_target`` /
  ``process_results`` from ``utils.py``, and vqaudit's generation settings: ``max_new_tokens: 512``,
  ``temperature: 0``, ``do_sample: false``, and an ``until`` marker no reply contains (lmms-eval's default stop,
  ``"\n\n"``, would cut a reply at its first blank line);
- ``NAME.jsonl``: one document per view in ``views.jsonl`` order (so ``doc_id`` is the view's 0-based position):
  ``index``, ``view_id``, ``group_id``, ``state``, ``source``, ``prompt_id``, ``prompt`` (the full vqaudit
  prompt, sent as is), ``image`` (a file name in ``images/``), ``image_sha256``;
- ``images/SHA256.EXT``: the image files' bytes, unchanged (identical images stored once);
- ``utils.py``: ``doc_to_visual`` opens the image (PIL, RGB), ``doc_to_text`` returns the prompt,
  ``doc_to_target`` the view id (so the flat log, which drops ``doc``, still names the view), and
  ``process_results`` only reports whether a reply came back (metric ``replied``): vqaudit does the scoring;
- ``README.md``: the commands.

Import: ``--log_samples`` output, JSONL (``DATE_samples_NAME.jsonl``, one sample a line) or JSON (a list, or
``{"logs": [...]}``; a ``.jsonl`` file holding one JSON list or one ``{"logs": [...]}`` object is read as
that list; a log without samples is refused). Both shapes: the older nested
one (``evaluator.py``: ``doc`` and ``arguments`` kept, ``resps: [["text"]]``, ``filtered_resps: ["text"]``) and
the newer flat one (``loggers/evaluation_tracker.py::save_results_samples``: ``doc`` and ``arguments`` dropped,
``input`` = ``arguments[0]``, one-element lists unwrapped, ``filtered_resps: "text"``, ``resps`` dropped when
equal). The reply is ``filtered_resps``, else (absent or null) ``resps``, each a text or one-element lists of
one; several replies are refused (lmms-eval's metric would take the first, ``results[0]``; vqaudit scores one
reply per view), and a sample whose both are null is recorded as an error reply. The view is ``doc.view_id``,
else ``target``, else ``doc_id``; ``doc_id`` is checked against the view when both are there, ``doc.prompt``
must be the view's prompt and ``input`` (or ``arguments[0]``) must contain it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.files import atomic_write_text
from vqaudit.harness.common import GENERATION, Prediction, check_input, check_view_id, export_rows, view_id_at
from vqaudit.harness.text_lines import json_lines
from vqaudit.harness.view_index import ViewIndex
from vqaudit.schema import View
from vqaudit.store import Benchmark
from vqaudit.suites.registry import prompt_for
from vqaudit.textsafe import decode_lenient

UNTIL = "<|vqaudit-no-stop|>"
"""The ``until`` marker of the task: no reply contains it, so generation ends at end-of-sequence or 512 tokens."""
_SUFFIX = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}

UTILS = '''"""lmms-eval hooks of a vqaudit task (written by `vqaudit export --to lmms-eval`).

The task only collects replies; vqaudit scores them (`vqaudit import-predictions LOG --format lmms-eval`).
"""

from pathlib import Path

from PIL import Image

IMAGES = Path(__file__).resolve().parent / "images"


def doc_to_visual(doc):
    """The view's image, as lmms-eval's models take it (a list of PIL images)."""
    with Image.open(IMAGES / doc["image"]) as image:
        return [image.convert("RGB")]


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    """The full vqaudit prompt of the view."""
    return doc["prompt"]


def doc_to_target(doc):
    """The view id: the log keeps it as `target`, so every sample names its view."""
    return doc["view_id"]


def process_results(doc, results):
    """Whether a nonempty reply came back (vqaudit parses and scores the reply itself)."""
    return {"replied": float(bool(results) and bool(str(results[0]).strip()))}
'''


def export(bench: Benchmark, out: Path, *, final: Path, name: str) -> list[Path]:
    """Write the task folder (``NAME.yaml``, ``NAME.jsonl``, ``utils.py``, ``images/``, ``README.md``) into ``out``.

    Args:
        bench: the benchmark.
        out: the (staged) folder to write into.
        final: where ``out`` will be when the export is complete (the YAML names the data file there).
        name: the task name (``--tasks NAME``).

    Returns:
        The files written (images not listed one by one: the ``images`` folder is).
    """
    docs: list[str] = []
    for row in export_rows(bench):
        image = f"{row.view.image_sha256}{_SUFFIX.get(row.image_mime, '.img')}"
        if not (out / "images" / image).exists():  # plain writes: the staged folder is renamed into place whole
            (out / "images").mkdir(exist_ok=True)
            (out / "images" / image).write_bytes(row.image)
        view = row.view
        docs.append(
            json.dumps(
                {
                    "index": row.index,
                    "view_id": view.view_id,
                    "group_id": view.group_id,
                    "state": view.state,
                    "source": view.source,
                    "prompt_id": row.prompt_id,
                    "prompt": row.prompt,
                    "image": image,
                    "image_sha256": view.image_sha256,
                },
                ensure_ascii=True,
            )
        )
    atomic_write_text(out / f"{name}.jsonl", "".join(d + "\n" for d in docs))
    atomic_write_text(out / f"{name}.yaml", task_yaml(name, final / f"{name}.jsonl"))
    atomic_write_text(out / "utils.py", UTILS)
    atomic_write_text(out / "README.md", readme(name, final))
    return [out / f"{name}.yaml", out / f"{name}.jsonl", out / "utils.py", out / "images", out / "README.md"]


def task_yaml(name: str, data: Path) -> str:
    """The task YAML (``data``: the absolute path of the JSONL, as a JSON string, which YAML reads the same)."""
    return f"""# vqaudit benchmark as an lmms-eval task (written by `vqaudit export --to lmms-eval`)
task: {name}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {json.dumps(str(data))}
test_split: test
output_type: generate_until
doc_to_visual: !function utils.doc_to_visual
doc_to_text: !function utils.doc_to_text
doc_to_target: !function utils.doc_to_target
generation_kwargs:
  max_new_tokens: {GENERATION.max_tokens}
  temperature: {GENERATION.temperature:g}
  do_sample: false
  until: [{json.dumps(UNTIL)}]
process_results: !function utils.process_results
metric_list:
  - metric: replied
    aggregation: mean
    higher_is_better: true
metadata:
  version: 0.0
"""


def readme(name: str, final: Path) -> str:
    """The export's README: the lmms-eval command and the import."""
    return f"""# {name}: a vqaudit benchmark as an lmms-eval task

Written by `vqaudit export --to lmms-eval`. `{name}.yaml` names its data file by absolute path
({final}/{name}.jsonl): if you move this folder, edit `data_files.test` in the YAML.

1. Run the task with `--log_samples` (any model lmms-eval supports):

       python -m lmms_eval --model llava_onevision --model_args pretrained=lmms-lab/llava-onevision-qwen2-7b-ov \\
           --tasks {name} --include_path {final} --batch_size 1 --log_samples --output_path logs/

   Generation: temperature 0, greedy, at most 512 new tokens (as `vqaudit run`). The task's only metric,
   `replied`, is the fraction of views with a nonempty reply; vqaudit does the scoring.

   A model behind an OpenAI-compatible server (vLLM, SGLang, LMDeploy): lmms-eval's `openai` model, which sends
   the images as PNG (lossless; unless LMMS_IMAGE_ENCODE_FORMAT=JPEG):

       python -m lmms_eval --model openai \\
           --model_args model=SERVED_MODEL,base_url=http://HOST:PORT/v1,api_key=KEY,timeout=120 \\
           --tasks {name} --include_path {final} --batch_size 1 --log_samples --output_path logs/

   Install: lmms-eval 0.7.3 needs `filelock<4` beside it (`pip install lmms-eval==0.7.3 'filelock<4'`: its
   evaluator imports `filelock._api`, which filelock 4.3 no longer has), and it pulls torch: pip's default is
   the CUDA build; install a CPU build first to only call a server.

2. Import the sample log and score it:

       vqaudit import-predictions logs/MODEL/DATE_samples_{name}.jsonl --bench BENCH --format lmms-eval \\
           --out runs/MODEL
       vqaudit score runs/MODEL
"""


def read(path: Path, bench: Benchmark) -> list[Prediction]:
    """The samples of an lmms-eval ``--log_samples`` file, each mapped to its view.

    A file named ``.jsonl`` whose content is one JSON list, or one JSON object with a ``"logs"`` key (on one
    line or pretty-printed), is read as that list: no JSON Lines file of samples (one object a line) starts
    with ``[`` or is a single object with a ``logs`` field (samples have none). A sample holding its inputs (the nested
    shape's ``doc.prompt`` and ``arguments``, the flat shape's ``input``) must hold the view's prompt.

    Raises:
        VqauditError: the file is missing, a zip archive (an .xlsx sheet), holds no sample (0 bytes, blank
            lines, ``[]``, ``{"logs": []}``: "no samples (an empty lmms-eval log)"), or is not JSON/JSONL of
            sample objects; a sample names no view of the benchmark (``doc.view_id`` / ``target`` / ``doc_id``), its
            ``doc_id`` and view disagree, its ``doc.prompt`` is not the view's prompt (or its ``input`` / first
            argument does not contain it), or its reply is not text or is several replies (naming the file, the
            1-based row or sample and the field).
    """
    return list(predictions(path, ViewIndex.of_benchmark(bench)))


def predictions(path: Path, views: ViewIndex) -> Iterator[Prediction]:
    """:func:`read`'s samples one at a time, as the log is read (what ``import-predictions`` consumes).

    Raises:
        VqauditError: as :func:`read`, once the log is read to its end (a sample refused, or a line that is not
            JSON further on); the samples before a refused one have been yielded.
    """
    refused: VqauditError | None = None  # the first sample refused; raised once every line is known to be JSON
    samples = 0
    for row, record in _records(path):  # one sample at a time: no list of the raw samples is held
        samples += 1
        if refused is None:
            try:
                prediction = _prediction(path, views, row, record)
            except VqauditError as exc:
                refused = exc
                continue
            yield prediction
    if not samples:
        raise VqauditError(f"{path}: no samples (an empty lmms-eval log)")
    if refused is not None:
        raise refused


def _records(path: Path) -> Iterator[tuple[int, Any]]:
    """``(row, sample)`` of the log, in order, each parsed as it is reached and let go by the reader.

    Raises:
        VqauditError: the file is missing, a zip archive, or not JSON (naming the row of a JSON Lines file).
    """
    if not path.is_file():
        raise VqauditError(f"{path}: file not found")
    with path.open("rb") as handle:
        head = handle.read(4)
    if head.startswith(b"PK\x03\x04"):  # a zip archive: an .xlsx sheet (VLMEvalKit) given as an lmms-eval log
        raise VqauditError(
            f"{path}: a zip archive (an .xlsx sheet?), not an lmms-eval log of JSON samples; a "
            "VLMEvalKit result sheet is read with --format vlmevalkit"
        )
    if path.suffix.lower() != ".json":
        streamed = json_lines(path)
        if streamed is not None:
            yield from streamed
            return
    raw = path.read_bytes()
    text = decode_lenient(raw)
    del raw
    if not text.strip():
        return
    one_list = path.suffix.lower() != ".json" and (text.lstrip().startswith("[") or _logs_object(text))
    if path.suffix.lower() == ".json" or one_list:
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise VqauditError(
                f"{path}: not valid JSON"
                + (" (the file starts with '[': one JSON list, not JSON Lines)" if one_list else "")
                + f": {exc}"
            ) from None
        logs = data.get("logs") if isinstance(data, dict) else data
        if not isinstance(logs, list):
            raise VqauditError(f'{path}: expected a list of samples or {{"logs": [...]}}')
        del data, text
        for i in range(len(logs)):
            sample, logs[i] = logs[i], None
            yield i + 1, sample
        return
    lines = text.splitlines()  # the rows as before (str.splitlines' line ends)
    del text
    for row in range(1, len(lines) + 1):
        line, lines[row - 1] = lines[row - 1], ""
        if line.strip():
            try:
                sample = json.loads(line)
            except (ValueError, RecursionError) as exc:
                raise VqauditError(f"{path}: row {row}: not valid JSON: {exc}") from None
            yield row, sample


def _logs_object(text: str) -> bool:
    """Whether ``text`` is one JSON object with a ``"logs"`` key (lmms-eval's JSON shape saved as ``.jsonl``).

    A JSON Lines log of samples never is: its records are samples, which have no ``logs`` field, so a file
    whose whole content is such an object (on one line or pretty-printed) is read as that object.
    """
    if not text.lstrip().startswith("{"):
        return False
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return False
    return isinstance(data, dict) and "logs" in data


def _prediction(path: Path, views: ViewIndex, row: int, record: Any) -> Prediction:
    if not isinstance(record, dict):
        raise VqauditError(
            f"{path}: row {row}: expected a JSON object (one lmms-eval sample), got {type(record).__name__}"
        )
    ids = views
    doc = record.get("doc")
    if isinstance(doc, dict) and "view_id" in doc:
        view_id: str | None = check_view_id(path, ids, row, "doc.view_id", doc["view_id"])
    elif "target" in record:
        view_id = check_view_id(path, ids, row, "target", record["target"])
    else:
        view_id = None
    if "doc_id" in record:
        at = view_id_at(path, views, row, "doc_id", record["doc_id"])
        if view_id is not None and at != view_id:
            raise VqauditError(
                f"{path}: row {row}, field 'doc_id': {record['doc_id']} is view {at!r}, but the "
                f"sample names {view_id!r} (was the log made on another export?)"
            )
        view_id = at
    if view_id is None:
        raise VqauditError(f"{path}: row {row}: no 'doc.view_id', 'target' or 'doc_id' to match it to a view")
    _check_inputs(path, row, record, views.view_of(view_id))
    if "filtered_resps" not in record and "resps" not in record:
        raise VqauditError(f"{path}: row {row}: no 'filtered_resps' or 'resps' (was it written by --log_samples?)")
    for name in ("filtered_resps", "resps"):  # null (or absent) filtered_resps: the reply is resps
        text = _one_text(path, row, name, record.get(name))
        if text is not None:
            return Prediction(row=row, view_id=view_id, text=text)
    return Prediction(
        row=row, view_id=view_id, text=None, error="lmms-eval logged no reply (filtered_resps and resps null or absent)"
    )


def _check_inputs(path: Path, row: int, record: dict[str, Any], view: View) -> None:
    """Refuse a sample whose logged inputs are not the view's prompt (a log of another build of the benchmark).

    ``doc`` is the exported document as lmms-eval read it, so ``doc.prompt`` must be the prompt exactly. The
    context lmms-eval sent (``arguments[0]``, kept by the flat shape as ``input``) is ``doc_to_text`` after any
    ``--system_instruction`` or chat template (``ConfigurableTask.fewshot_context``), so it must contain it.
    """
    prompt = prompt_for(view)[1]
    doc = record.get("doc")
    if isinstance(doc, dict) and "prompt" in doc:
        got = doc["prompt"]
        check_input(path, row, "doc.prompt", got if isinstance(got, str) else json.dumps(got), prompt, view.view_id)
    arguments = record.get("arguments")
    context: tuple[str, Any] | None = ("input", record["input"]) if "input" in record else None
    if context is None and isinstance(arguments, list) and arguments:
        first = arguments[0][0] if isinstance(arguments[0], list) and arguments[0] else arguments[0]
        context = ("arguments", first)
    if context is not None and isinstance(context[1], str) and prompt not in context[1]:
        check_input(path, row, context[0], context[1], prompt, view.view_id)


def _one_text(path: Path, row: int, name: str, value: Any) -> str | None:
    """The one reply in ``value`` (a text, or one-element lists of it); None for null (no reply logged).

    Several replies for one sample (``repeats`` > 1, or a filter keeping several) are refused: lmms-eval's own
    metric would score the first (``process_results(doc, results)`` of a ``generate_until`` task reads
    ``results[0]``), but vqaudit scores one reply per view, asked once.
    """
    depth = 0
    while isinstance(value, list) and depth < 3:
        if not value:
            raise VqauditError(f"{path}: row {row}, field '{name}': an empty list, no reply")
        if len(value) > 1:
            raise VqauditError(
                f"{path}: row {row}, field '{name}': {len(value)} replies for one sample (was the "
                "task run with repeats > 1 or another filter?); vqaudit scores one reply per view: "
                "run the exported task as it is"
            )
        value, depth = value[0], depth + 1
    if value is None or isinstance(value, str):
        return value
    raise VqauditError(f"{path}: row {row}, field '{name}': expected the reply text, got {type(value).__name__}")
