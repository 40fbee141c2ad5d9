r"""VLMEvalKit: a benchmark as custom-dataset TSV files, and VLMEvalKit result sheets read back.

Export (VLMEvalKit ``vlmeval/dataset/__init__.py::build_dataset``: a dataset name it does not know is read from
``$LMUData/NAME.tsv``; a file with ``A`` and ``B`` columns is a ``CustomMCQDataset``, any other a
``CustomVQADataset``):

- ``NAME.tsv`` (views without options): ``index`` (the view's 0-based position in ``views.jsonl``), ``image``
  (base64 of the image file's bytes), ``question`` (the full vqaudit prompt: ``CustomVQADataset`` sends it as
  is), ``answer`` (the first gold answer, empty for a view that must abstain), then ``view_id``, ``group_id``,
  ``state``, ``source``;
- ``NAME_MCQ.tsv`` (multiple-choice views, e.g. UPD): the same columns plus ``hint`` and one column per option
  letter (``A``, ``B``, ...). ``ImageMCQDataset.build_prompt`` writes its own prompt ("Hint: ... Question: ...
  Options: A. ... Please select the correct answer from the options above."), so ``question`` is the view's
  question followed by the line the prompt setting adds after the options (e.g. "Answer with the option's
  letter from the given choices directly."); the wording around the options is VLMEvalKit's, not vqaudit's;
- ``README.md``: where to put the files and the ``run.py --mode infer`` command.

Fields are tab-separated, every field quoted (``csv.QUOTE_ALL``; pandas ``read_csv(sep='\t')``, VLMEvalKit's
``load``, strips the quotes and reads ``index`` as an integer), UTF-8, ``\n`` line ends.

Import: VLMEvalKit's result sheet ``outputs/MODEL/EVAL_ID/MODEL_NAME.xlsx`` (``PRED_FORMAT=tsv``: ``.tsv``; a
``.csv`` is read too): the input columns except ``image``, plus ``prediction``. A row is mapped to its view by
``view_id`` (checked against ``index`` when both are there), else by ``index``. Every ``question``, ``hint`` and
option-letter cell the sheet has must be the one the export wrote for the row's view (exact, except for the two
rewrites pandas makes when VLMEvalKit reads the TSV and writes the sheet: a missing-value text such as ``None``
written back empty, a number such as ``3`` written as ``3.0``); the first row that differs is refused.
"""

from __future__ import annotations

import base64
import csv
import io
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from vqaudit.errors import VqauditError
from vqaudit.files import atomic_write_text
from vqaudit.harness.common import ExportRow, Prediction, check_input, check_view_id, export_rows, view_id_at
from vqaudit.harness.view_index import ViewIndex
from vqaudit.schema import View
from vqaudit.store import Benchmark
from vqaudit.suites.registry import prompt_for
from vqaudit.xlsx import read_xlsx_rows

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
VQA_COLUMNS = ("index", "image", "question", "answer", "view_id", "group_id", "state", "source")
SUFFIXES = (".xlsx", ".tsv", ".csv")


def export(bench: Benchmark, out: Path, *, final: Path, name: str) -> list[Path]:
    """Write ``NAME.tsv`` and/or ``NAME_MCQ.tsv`` and ``README.md`` into ``out``; return the files written.

    Args:
        bench: the benchmark.
        out: the (staged) folder to write into.
        final: where ``out`` will be when the export is complete (named in the README).
        name: the dataset name (``--data NAME``).
    """
    vqa: list[list[str]] = []
    mcq: list[tuple[ExportRow, list[str]]] = []
    for row in export_rows(bench):
        if row.view.options:
            mcq.append((row, _common(row, question_cell(row.view, row.prompt))))
        else:
            vqa.append(_common(row, row.prompt))
    written: list[Path] = []
    if vqa:
        written.append(_write_tsv(out / f"{name}.tsv", VQA_COLUMNS, vqa))
    if mcq:
        n_letters = max(len(r.view.options) for r, _ in mcq)
        if n_letters > len(LETTERS):
            raise VqauditError(f"{bench.root}: a view has {n_letters} options; VLMEvalKit letters stop at Z")
        letters = tuple(LETTERS[:n_letters])
        header = (*VQA_COLUMNS, "hint", *letters)
        rows = [[*cells, *(input_cells(r.view, r.prompt, letters)[c] for c in ("hint", *letters))] for r, cells in mcq]
        written.append(_write_tsv(out / f"{name}_MCQ.tsv", header, rows))
    atomic_write_text(out / "README.md", readme(name, final, [p.name for p in written]))
    return [*written, out / "README.md"]


def _common(row: ExportRow, question: str) -> list[str]:
    view = row.view
    answer = view.obligation.gold[0] if view.obligation.gold else ""
    return [
        str(row.index),
        base64.b64encode(row.image).decode("ascii"),
        question,
        answer,
        view.view_id,
        view.group_id,
        view.state,
        view.source,
    ]


def question_cell(view: View, prompt: str) -> str:
    """The ``question`` cell of ``view`` asked with ``prompt``.

    The prompt itself, or for a multiple-choice view the question and the prompt's setting line
    (:func:`mcq_question`).
    """
    if not view.options:
        return prompt
    return mcq_question(view.question, view.meta.get("hint"), view.options, prompt)


def input_cells(view: View, prompt: str, letters: Sequence[str]) -> dict[str, str]:
    """The input cells the export writes for ``view``: ``question``, ``hint`` and one per option letter.

    ``hint`` and the letters past the view's options are empty (a view without options has neither column in
    ``NAME.tsv``; the importer compares them only where the sheet has the column).
    """
    cells = {"question": question_cell(view, prompt), "hint": str(view.meta.get("hint") or "") if view.options else ""}
    cells.update({letter: view.options[k] if k < len(view.options) else "" for k, letter in enumerate(letters)})
    return cells


def mcq_question(question: str, hint: object, options: Sequence[str], prompt: str) -> str:
    """The ``question`` cell of a multiple-choice view: the question, then what the prompt adds after the options.

    vqaudit's multiple-choice prompts are ``[hint] question, "A. option" lines, [setting line]``
    (:func:`vqaudit.prompts.upd.upd_prompt`); VLMEvalKit writes the hint, question and options itself, so only
    the setting line is carried over. A prompt of another shape is given whole.
    """
    hint_text = str(hint or "").strip()
    head = "\n".join(
        ([hint_text] if hint_text else [])
        + [question.strip()]
        + [f"{LETTERS[k]}. {text}" for k, text in enumerate(options)]
    )
    if not prompt.startswith(head):
        return prompt
    tail = prompt[len(head) :].strip("\n")
    return question.strip() + ("\n" + tail if tail else "")


def _write_tsv(path: Path, header: Sequence[str], rows: Sequence[Sequence[str]]) -> Path:
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t", quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    atomic_write_text(path, buffer.getvalue())
    return path


def readme(name: str, final: Path, files: Sequence[str]) -> str:
    """The export's README: where the files go and the command that runs them."""
    datasets = " ".join(Path(f).stem for f in files)
    stem = Path(files[0]).stem if files else name  # one file for a benchmark of one source
    return f"""# {name}: a vqaudit benchmark as a VLMEvalKit custom dataset

Files: {", ".join(f"`{f}`" for f in files)} (written by `vqaudit export --to vlmevalkit`).

1. Copy (or link) the TSV files into VLMEvalKit's data folder, `$LMUData` (default `~/LMUData`):

       cp {final}/*.tsv "${{LMUData:-$HOME/LMUData}}/"

2. Run inference only (vqaudit scores the replies; VLMEvalKit's own evaluation does not apply):

       python run.py --data {datasets} --model YOUR_MODEL --mode infer

   VLMEvalKit warns that the dataset "is not officially supported" and loads it as a custom VQA (or MCQ) dataset.
   Decoding settings are the model wrapper's own; vqaudit asks for temperature 0 and at most 512 new tokens.

   A model behind an OpenAI-compatible server (vLLM, SGLang, LMDeploy): `--base-url` and the server's model name,
   with vqaudit's decoding settings (VLMEvalKit's default `--max-tokens` is 32768):

       python run.py --data {datasets} --model SERVED_MODEL --base-url http://HOST:PORT/v1 --key KEY \\
           --temperature 0 --max-tokens 512 --mode infer

   Images: VLMEvalKit's API models (`--base-url`, the GPT wrappers) re-encode every image as JPEG (Pillow's
   quality 75) before sending it, so the model sees other pixels than `vqaudit run` sends, and on charts replies
   change (docs/harnesses/vlmevalkit.md in vqaudit). Local models get the PNG decoded to RGB. Installing
   VLMEvalKit pulls torch: pip's default is the CUDA build; install a CPU build first to only call a server.

3. Import the result sheet (`outputs/YOUR_MODEL/EVAL_ID/YOUR_MODEL_{stem}.xlsx`) into a run folder and score it:

       vqaudit import-predictions outputs/YOUR_MODEL/EVAL_ID/YOUR_MODEL_{stem}.xlsx --bench BENCH \\
           --format vlmevalkit --out runs/YOUR_MODEL
       vqaudit score runs/YOUR_MODEL

Rows are matched to views by `view_id` (or `index`, the view's 0-based position in the benchmark's views.jsonl).
"""


def read(path: Path, bench: Benchmark) -> list[Prediction]:
    """The rows of a VLMEvalKit result sheet (``.xlsx``, ``.tsv`` or ``.csv``), each mapped to its view.

    An empty ``prediction`` cell is the empty reply ``""`` (VLMEvalKit writes what the model returned).

    Raises:
        VqauditError: an unsupported suffix, no data row (a header only, or blank rows), no ``prediction`` column,
            neither ``view_id`` nor ``index``, a row naming no view of the benchmark or whose ``view_id`` and
            ``index`` disagree, or whose ``question``, ``hint`` or option (``A``, ``B``, ...) cell is not what the
            export wrote for its view (a sheet of another build of the benchmark: its letters would be scored
            against other options), naming the file, the row and the field.
    """
    return list(predictions(path, ViewIndex.of_benchmark(bench)))


def predictions(path: Path, views: ViewIndex) -> Iterator[Prediction]:
    """:func:`read`'s rows one at a time, as the sheet is read (what ``import-predictions`` consumes).

    Raises:
        VqauditError: as :func:`read`, once the sheet is read to its end; the rows before a refused one have
            been yielded.
    """
    rows = _rows(path)  # one row at a time: a sheet's base64 image cells are never all held
    first = next(rows, None)
    if first is None:
        raise VqauditError(f"{path}: no header row")
    # The first refusal is raised once the whole file is read, so a file that also cannot be read further on
    # (a quote never closed, not UTF-8) is refused for that, as when its rows were all read before any check.
    refused: VqauditError | None = None
    header = [str(c or "").strip() for c in first]
    col = {name: i for i, name in reversed(list(enumerate(header)))}
    if "prediction" not in col:
        refused = VqauditError(f"{path}: row 1: no 'prediction' column (is it a VLMEvalKit result sheet?)")
    elif "view_id" not in col and "index" not in col:
        refused = VqauditError(f"{path}: row 1: neither a 'view_id' nor an 'index' column to match rows to views")
    found = False
    for number, cells in enumerate(rows, start=2):  # row numbers as in the file: the header is row 1
        if refused is not None or not any(c not in (None, "") for c in cells):
            continue
        try:
            prediction = _prediction(path, views, header, col, number, cells)
        except VqauditError as exc:
            refused = exc
            continue
        found = True
        yield prediction
    if refused is not None:
        raise refused
    if not found:
        raise VqauditError(f"{path}: no data rows (an empty VLMEvalKit result sheet: a header only)")


def _prediction(
    path: Path,
    views: ViewIndex,
    header: Sequence[str],
    col: dict[str, int],
    number: int,
    cells: list[str | None],
) -> Prediction:
    """The :class:`Prediction` of sheet row ``number`` (its ``cells``); raises as :func:`read` does for a row."""

    def cell(name: str) -> str | None:
        i = col.get(name)
        return cells[i] if i is not None and i < len(cells) else None

    view_id = cell("view_id")
    if view_id not in (None, ""):
        view_id = check_view_id(path, views, number, "view_id", view_id)
        index = cell("index")
        if index not in (None, "") and view_id_at(path, views, number, "index", index) != view_id:
            raise VqauditError(
                f"{path}: row {number}, field 'index': {index} is view "
                f"{view_id_at(path, views, number, 'index', index)!r}, not {view_id!r}"
            )
    else:
        view_id = view_id_at(path, views, number, "index", cell("index"))
    _check_inputs(path, number, views.view_of(view_id), header, cell)
    return Prediction(row=number, view_id=view_id, text=cell("prediction") or "")


def _check_inputs(
    path: Path, number: int, view: View, header: Sequence[str], cell: Callable[[str], str | None]
) -> None:
    """Refuse a row whose ``question``, ``hint`` or option cells are not the ones the export wrote for its view.

    VLMEvalKit's sheet is the exported TSV as pandas read it, so :func:`~vqaudit.harness.common.same_text` is
    asked to allow pandas' own rewrites (a missing-value cell written back empty, a number as ``3.0``).
    """
    letters = [c for c in header if len(c) == 1 and c in LETTERS]
    names = [c for c in ("question", "hint") if c in header] + letters
    if not names:
        return
    want = input_cells(view, prompt_for(view)[1], letters)
    for name in names:
        check_input(path, number, name, cell(name), want[name], view.view_id, pandas=True)


def _rows(path: Path) -> Iterator[list[str | None]]:
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise VqauditError(f"{path}: a VLMEvalKit result sheet is {', '.join(SUFFIXES)}")
    if not path.is_file():
        raise VqauditError(f"{path}: file not found")
    if suffix == ".xlsx":
        yield from read_xlsx_rows(path)
        return
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))  # a base64 image cell is far above the 128 KiB default
    kind = suffix[1:].upper()
    row, start = 0, 1  # ``start``: the physical line the next row starts on
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:  # a sheet saved by Excel starts with a BOM
            # strict: a quote left open at the end of the file (a sheet cut off mid-cell) is an error, never a
            # row holding the fragment (Python's csv module reads it as a complete field unless strict)
            reader = csv.reader(handle, delimiter="\t" if suffix == ".tsv" else ",", strict=True)
            for values in reader:
                row, start = row + 1, reader.line_num + 1
                yield list[str | None](values)
    except UnicodeDecodeError as exc:
        raise VqauditError(f"{path}: not a readable UTF-8 {kind} file: {exc}") from None
    except csv.Error as exc:
        where = f"{path}: row {row + 1} (line {start})"
        if "unexpected end of data" in str(exc):
            raise VqauditError(
                f"{where}: a quoted cell starts here and is never closed (the file is cut off, or "
                "a '\"' is unmatched); nothing was imported"
            ) from None
        raise VqauditError(f"{where}: not valid {kind}: {exc}") from None
