"""Instruction-tuning data for UPD in the LLaVA conversation format (seed 001, §6.1 and appendix 0.A).

Recipe: standard, AAD and IVQD questions mixed 6:2:2 by default (IASD is left out, §7), each in the base setting
or with the additional option; base-setting UPD targets are "I cannot answer."; option-setting UPD targets are the
extra option's letter; standard targets are the correct letter. Each question shows 2-4 options (an augmentation
that makes the model robust to the number of options): a standard question keeps its correct option and draws
the rest from its distractors; an AAD question draws only from the distractors; an IVQD question keeps its
correct option and is shown with another item's image (the IVQD rules of :mod:`vqaudit.suites.upd.variants`).
Every prompt ends with LLaVA's "Answer with the option's letter from the given choices directly.".

Sample ``k`` of kind ``c`` draws its item, setting, option count and order from
``numpy.random.default_rng([seed, c, k])``, so the output is deterministic. Export from items disjoint from the
evaluation set (the bundled default uses easy-VQA's *train* split; the bundled evaluation set uses its test split).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from vqaudit.errors import VqauditError
from vqaudit.files import atomic_write_bytes, atomic_write_text, sha256_bytes, write_json
from vqaudit.prompts.upd import EXTRA_OPTION, LETTER_INSTRUCTION, LETTERS
from vqaudit.store import MANIFEST_FILE
from vqaudit.suites.upd.build import bundled_path, image_name, versions
from vqaudit.suites.upd.preprocess import preprocess
from vqaudit.suites.upd.tsv import MCItem, load_tsv
from vqaudit.suites.upd.variants import build_aad, build_ivqd

KINDS = ("standard", "aad", "ivqd")
CANNOT_ANSWER = "I cannot answer."
TUNING_FILE = "upd_tuning.json"


def split_counts(n: int, ratio: tuple[float, ...]) -> tuple[int, ...]:
    """Split ``n`` samples by ``ratio`` with the largest-remainder rule (ties to the earlier kind).

    Raises:
        VqauditError: a negative ratio or one summing to zero.
    """
    if any(r < 0 for r in ratio) or sum(ratio) <= 0:
        raise VqauditError(f"--ratio must be non-negative and not all zero (got {ratio})")
    exact = [n * r / sum(ratio) for r in ratio]
    counts = [int(x) for x in exact]
    order = sorted(range(len(ratio)), key=lambda i: (-(exact[i] - counts[i]), i))
    for i in order[: n - sum(counts)]:
        counts[i] += 1
    return tuple(counts)


def _prompt(item: MCItem, options: list[str]) -> str:
    lines = ([item.hint] if item.hint else []) + [item.question]
    lines += [f"{LETTERS[k]}. {t}" for k, t in enumerate(options)]
    return "\n".join([*lines, LETTER_INSTRUCTION])


def _sample(
    kind: str, item: MCItem, image: bytes, rng: np.random.Generator, settings: tuple[str, ...], ident: str
) -> tuple[dict[str, Any], bytes]:
    others = [o for k, o in enumerate(item.options) if k != item.answer]
    keep_answer = kind != "aad"
    available = len(others) + (1 if keep_answer else 0)
    m = int(rng.integers(2, min(4, available) + 1))
    picked = [others[int(k)] for k in rng.choice(len(others), size=m - (1 if keep_answer else 0), replace=False)]
    if keep_answer:
        picked.append(item.answer_text)
    options = [picked[int(k)] for k in rng.permutation(len(picked))]
    setting = settings[int(rng.integers(len(settings)))]
    if setting == "option":
        extra = EXTRA_OPTION["ivqd"] if kind == "ivqd" else EXTRA_OPTION["aad"]
        if kind == "standard" and rng.random() < 0.5:
            extra = EXTRA_OPTION["ivqd"]
        options.append(extra)
    if kind == "standard":
        target = LETTERS[options.index(item.answer_text)]
    else:
        target = LETTERS[len(options) - 1] if setting == "option" else CANNOT_ANSWER
    record = {
        "id": ident,
        "image": image_name(image),
        "conversations": [
            {"from": "human", "value": "<image>\n" + _prompt(item, options)},
            {"from": "gpt", "value": target},
        ],
    }
    return record, image


def export_tuning(
    out: Path,
    *,
    tsv: Path | None,
    n: int = 1000,
    ratio: tuple[float, float, float] = (6.0, 2.0, 2.0),
    settings: tuple[str, ...] = ("base", "option"),
    seed: int = 0,
) -> dict[str, Any]:
    """Write ``out/upd_tuning.json`` (a JSON list of LLaVA conversations), ``out/images/`` and a manifest.

    Args:
        out: target folder; must not exist or be empty.
        tsv: an MMBench-layout TSV of training items, or None for the bundled easy-VQA train items.
        n: number of samples (>= 1).
        ratio: standard : AAD : IVQD proportions (default 6:2:2, appendix 0.A).
        settings: settings to draw from: ``base`` and/or ``option``.
        seed: seed of every draw; the same inputs and seed give byte-identical files.

    Returns:
        The manifest: counts per kind, ratio, settings, seed, input SHA-256, versions and file SHA-256s.

    Raises:
        VqauditError: bad arguments, a non-empty output folder, or a kind with a positive share but no item.
    """
    if n < 1:
        raise VqauditError(f"-n must be at least 1 (got {n})")
    if not settings or any(s not in ("base", "option") for s in settings):
        raise VqauditError(f"tuning settings must be 'base' and/or 'option' (got {settings})")
    if out.exists() and any(out.iterdir()):
        raise VqauditError(f"{out}: output folder exists and is not empty; choose a new folder")
    path = tsv if tsv is not None else bundled_path("easyvqa_train_mc.tsv")
    items = list(preprocess(load_tsv(path)).items)
    aad_items = [p.item for p in build_aad(items)[0]]
    ivqd_pairs = build_ivqd(items, seed)[0]
    pools: dict[str, list[tuple[MCItem, bytes]]] = {
        "standard": [(i, i.image) for i in items],
        "aad": [(i, i.image) for i in aad_items],
        "ivqd": [(p.item, p.upd_image) for p in ivqd_pairs],
    }
    counts = split_counts(n, ratio)
    records: list[dict[str, Any]] = []
    images: dict[str, bytes] = {}
    for code, (kind, count) in enumerate(zip(KINDS, counts, strict=True)):
        if count and not pools[kind]:
            raise VqauditError(f"{path}: no item qualifies for {kind} tuning samples")
        for k in range(count):
            rng = np.random.default_rng([seed, code, k])
            item, image = pools[kind][int(rng.integers(len(pools[kind])))]
            record, data = _sample(kind, item, image, rng, settings, f"upd-tune-{kind}-{k:06d}")
            records.append(record)
            images[image_name(data)] = data
    out.mkdir(parents=True, exist_ok=True)
    files = {}
    for name in sorted(images):
        atomic_write_bytes(out / name, images[name])
        files[name] = sha256_bytes(images[name])
    atomic_write_text(out / TUNING_FILE, json.dumps(records, indent=1, ensure_ascii=False) + "\n")
    manifest = {
        "format": "llava-conversations/1",
        "counts": dict(zip(KINDS, counts, strict=True)),
        "ratio": list(ratio),
        "settings": list(settings),
        "seed": seed,
        "n": n,
        "input": {path.name: sha256_bytes(path.read_bytes())},
        "versions": versions(),
        "files": files,
        "data_sha256": sha256_bytes((out / TUNING_FILE).read_bytes()),
    }
    write_json(out / MANIFEST_FILE, manifest)
    return manifest
