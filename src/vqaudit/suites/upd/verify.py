"""The UPD checker: re-derives every view's gold and options from its meta and its group's (``vqaudit verify``).

A UPD view's label follows from its source row, which the benchmark does not hold; what its meta declares still
fixes it (seed 001 §3-4, appendix 0.C), and :func:`check_upd_group` re-derives that:

- a standard view obliges the letter whose option is the item's correct text (``correct_text``); a UPD view
  (``aad``, ``iasd``, ``ivqd``) obliges abstention;
- the meta's ``variant`` and ``setting`` are the group's; every view asks the group's question;
- ``setting`` ``option``: the abstain letter names the added option (the last one for built benchmarks, whose
  text is the variant's :data:`vqaudit.prompts.upd.EXTRA_OPTION`); ``instruction``: the abstain letter is
  :data:`vqaudit.prompts.upd.INSTRUCTION_LETTER`; ``base`` and ``original``: none;
- for benchmarks built by ``vqaudit build upd`` (not from release files): the views of each side are the circular
  shifts of rotation 0's options, one per option; the standard side and the ``aad``/``iasd`` side share one image,
  ``ivqd`` shows another; an ``aad`` view does not offer the removed correct option.
"""

from __future__ import annotations

from collections.abc import Sequence

from vqaudit.errors import VqauditError
from vqaudit.prompts.upd import EXTRA_OPTION, INSTRUCTION_LETTER, LETTERS
from vqaudit.schema import Group, UPDViewMeta, View


def verify_upd_groups(views: Sequence[View], groups: Sequence[Group], *, release: bool) -> list[tuple[str, str]]:
    """:func:`check_upd_group` of every group; ``(view or group id, problem)`` pairs (empty = valid)."""
    by_id = {v.view_id: v for v in views}
    faults: list[tuple[str, str]] = []
    for group in groups:
        faults += check_upd_group(group, [by_id[i] for i in group.view_ids if i in by_id], release=release)
    return faults


def check_upd_group(group: Group, views: Sequence[View], *, release: bool) -> list[tuple[str, str]]:
    """Re-derive one UPD group's labels from its views' meta (module docstring).

    Args:
        group: the group record.
        views: its views.
        release: the benchmark was built from official release files (``manifest.json`` ``release: true``),
            whose circular copies are published as they are (only the per-view rules apply).
    """
    faults: list[tuple[str, str]] = []
    metas: dict[str, UPDViewMeta] = {}
    for view in views:
        try:
            metas[view.view_id] = UPDViewMeta.of(view)
        except VqauditError as exc:
            faults.append((view.view_id, str(exc)))
    for view in views:
        meta = metas.get(view.view_id)
        if meta is not None:
            faults += [
                (view.view_id, f"views.jsonl, view {view.view_id}, {p}")
                for p in _view_problems(group, view, meta, release)
            ]
    if not release and not faults:
        faults += _group_problems(group, views, metas)
    return faults


def _view_problems(group: Group, view: View, meta: UPDViewMeta, release: bool) -> list[str]:
    problems: list[str] = []
    if view.question != group.question:
        problems.append("field 'question': not the group's question")
    if (meta.variant, meta.setting) != (group.meta.get("variant"), group.meta.get("setting")):
        problems.append("field 'meta.variant'/'meta.setting': not the group's")
    options = tuple(view.options)
    if meta.kind == "standard":
        gold = view.obligation.gold
        letter = gold[0] if view.obligation.kind == "answer" and len(gold) == 1 else ""
        index = LETTERS.index(letter) if len(letter) == 1 and letter in LETTERS[: len(options)] else None
        if view.state != "standard" or index is None or options[index] != meta.correct_text:
            problems.append(
                f"field 'obligation': {view.obligation.kind} {list(gold)!r}, but the option whose text "
                f"is the correct text {meta.correct_text!r} is "
                f"{_letter_of(options, meta.correct_text)}"
            )
    elif view.obligation.kind != "abstain" or view.state != meta.variant:
        problems.append(f"field 'obligation': a {meta.variant} view must oblige abstention")
    if meta.setting == "instruction" and meta.abstain_letter != INSTRUCTION_LETTER:
        problems.append(f"field 'meta.abstain_letter': the instruction setting abstains with {INSTRUCTION_LETTER}")
    elif meta.setting in ("base", "original") and meta.abstain_letter is not None:
        problems.append(f"field 'meta.abstain_letter': the {meta.setting} setting has no abstain letter")
    elif (
        meta.setting == "option"
        and not release
        and (
            not options or options[-1] != EXTRA_OPTION[meta.variant] or meta.abstain_letter != LETTERS[len(options) - 1]
        )
    ):
        problems.append(
            "field 'options': the option setting adds the variant's abstain option last, and its letter abstains"
        )
    return problems


def _letter_of(options: tuple[str, ...], text: str | None) -> str:
    hits = [LETTERS[i] for i, o in enumerate(options) if o == text]
    return repr(hits[0]) if hits else "not offered"


def _group_problems(group: Group, views: Sequence[View], metas: dict[str, UPDViewMeta]) -> list[tuple[str, str]]:
    faults: list[tuple[str, str]] = []
    sides: dict[str, list[View]] = {}
    for view in views:
        sides.setdefault(metas[view.view_id].kind, []).append(view)
    images = {kind: {v.image for v in side} for kind, side in sides.items()}
    for kind, side in sides.items():
        side = sorted(side, key=lambda v: metas[v.view_id].rotation)
        extra = 1 if metas[side[0].view_id].setting == "option" else 0
        base = tuple(side[0].options)[: len(side[0].options) - extra]
        for view in side:
            meta = metas[view.view_id]
            r = meta.rotation
            shown = base[r:] + base[:r] if r < len(base) else None
            if (
                meta.n_rotations != len(side)
                or len(side) != len(base)
                or (shown is None or tuple(view.options)[: len(base)] != shown)
            ):
                faults.append(
                    (
                        view.view_id,
                        f"views.jsonl, view {view.view_id}, field 'options': not rotation {r} "
                        f"of the {kind} side's {len(base)} options",
                    )
                )
        if len(images[kind]) != 1:
            faults.append(
                (
                    group.group_id,
                    f"groups.jsonl, group {group.group_id}: the {kind} views show {len(images[kind])} images",
                )
            )
    if "standard" in sides and "upd" in sides:
        variant = metas[sides["upd"][0].view_id].variant
        if (images["standard"] == images["upd"]) != (variant != "ivqd"):
            faults.append(
                (
                    group.group_id,
                    f"groups.jsonl, group {group.group_id}: an {variant} group must "
                    f"{'show another' if variant == 'ivqd' else 'keep the'} image",
                )
            )
        if variant == "aad":
            for view in sides["upd"]:
                removed = metas[view.view_id].removed_text
                if removed is None or removed in view.options:
                    faults.append(
                        (
                            view.view_id,
                            f"views.jsonl, view {view.view_id}, field 'options': an aad view "
                            "must not offer the removed correct option",
                        )
                    )
    return faults
