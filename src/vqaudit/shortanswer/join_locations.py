"""Where a prediction or gold row was read, for the messages of the join and of the audit's layers.

A row's ``source`` is ``"FILE:N"`` (the file and its 1-based row); :func:`gold_locations` maps each joined row's
question id to ``"FILE: row N"`` of its gold.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from vqaudit.shortanswer.records import GoldItem, Prediction


def location(source: str, fallback: Path) -> str:
    """``"FILE: row N"`` of a ``source`` ``"FILE:N"``; ``fallback`` (as text) when the source names no row."""
    path, _, row = source.rpartition(":")
    return f"{path}: row {row}" if path and row.isdigit() else str(fallback)


class SourceLocations(Mapping[str, str]):
    """``qid -> "FILE: row N"`` of predictions whose ``source`` is ``"FILE:N"``, each text made only when asked for.

    The locations are read only by error messages, so nothing is held per row beyond the predictions themselves
    (held packed by :func:`vqaudit.shortanswer.importers.read_predictions`): a lookup reads the predictions in
    order until it finds the qid. A dict ``qid -> source`` cost about 200 bytes a row on an audit's peak memory.
    """

    def __init__(self, predictions: Sequence[Prediction], fallback: Path) -> None:
        """``predictions``: their ``source`` is ``"FILE:N"``; ``fallback``: named where a source has no row."""
        self._predictions = predictions
        self._fallback = fallback

    def __getitem__(self, qid: str) -> str:
        """The location of ``qid``'s row (the first prediction with that qid). Raises KeyError for an unknown qid."""
        for p in self._predictions:
            if p.qid == qid:
                return location(p.source, self._fallback)
        raise KeyError(qid)

    def __iter__(self) -> Iterator[str]:
        """The qids, in row order."""
        return (p.qid for p in self._predictions)

    def __len__(self) -> int:
        """The number of rows."""
        return len(self._predictions)


def gold_locations(
    predictions: Sequence[Prediction],
    gold_items: Sequence[GoldItem] | None,
    *,
    predictions_path: Path,
    gold_path: Path | None,
    join_on: str,
) -> Mapping[str, str]:
    """Where each joined row's gold was read, ``qid -> "FILE: row N"`` (for :func:`check_gold`'s messages).

    Embedded gold: the prediction file's row (a :class:`SourceLocations`). A gold file joined by id: the item's
    row as its loader recorded it (else its 1-based position in the file, the row the loaders' own errors name). A
    gold file joined by question text: the file and the prediction row it was joined to (the gold item is not
    recorded on the joined row).
    """
    if gold_items is None or gold_path is None:
        return SourceLocations(predictions, predictions_path)
    if join_on == "id":
        return {
            g.qid: location(g.source, gold_path) if g.source else f"{gold_path}: row {i}"
            for i, g in enumerate(gold_items, start=1)
        }
    return {p.qid: f"{gold_path}, the gold item joined to {location(p.source, predictions_path)}" for p in predictions}
