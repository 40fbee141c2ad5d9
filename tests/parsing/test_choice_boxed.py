r"""``\boxed{X}`` is a final declaration of :mod:`vqaudit.parsing.choice` (the answer box reasoning models are
prompted for: "put your final answer within \boxed{}", DeepSeek-R1 model card). Expected letters by hand."""

from __future__ import annotations

import pytest

from vqaudit.parsing.choice import match_declaration
from vqaudit.parsing.declarations import declarations


@pytest.mark.parametrize(
    ("reply", "letter"),
    [
        ("\\boxed{C}", "C"),
        ("So the final answer is $\\boxed{(B)}$.", "B"),
        ("\\boxed{\\text{D}}", "D"),
        ("\\boxed{A}, no wait: \\boxed{D}", "D"),  # the last declaration decides
        ("\\boxed{12}", None),  # a number: no label
        ("\\boxed{Cat}", None),  # a word starting with a capital letter: no label
        ("The answer is not \\boxed{A}", None),  # negated
        ("\\boxed{E}", None),  # not an option of A-D
    ],
)
def test_boxed_label(reply: str, letter: str | None) -> None:
    found = match_declaration(reply, "ABCD")
    assert (found.letter if found else None) == letter


def test_the_form_is_named_boxed() -> None:
    assert [d.form for d in declarations("\\boxed{B}")] == ["boxed"]
