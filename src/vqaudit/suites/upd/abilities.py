"""The 18 MMBench abilities of MM-UPD, their indices (#1-#18) and which ones the IVQD variant keeps.

Seed 001, appendix 0.B, Table A (index -> ability) and Table B (questions per ability and variant). MMBench has
20 leaf categories; MM-UPD drops ``image_quality`` (appendix 0.B.1, "Exclusion of Image Quality ability") and
``spatial_relationship`` (not among the 18 abilities of Table A). Category names are MMBench's snake_case leaf
names as written in the MMBench TSV ``category`` column.
"""

from __future__ import annotations

ABILITIES: tuple[str, ...] = (
    "ocr",
    "celebrity_recognition",
    "object_localization",
    "attribute_recognition",
    "action_recognition",
    "attribute_comparison",
    "nature_relation",
    "physical_relation",
    "social_relation",
    "identity_reasoning",
    "function_reasoning",
    "physical_property_reasoning",
    "structuralized_imagetext_understanding",
    "future_prediction",
    "image_topic",
    "image_emotion",
    "image_scene",
    "image_style",
)
"""The 18 abilities in the order of Table A: ``ABILITIES[i - 1]`` is ability ``#i``."""

ABILITY_LABELS: dict[str, str] = {
    "ocr": "OCR",
    "celebrity_recognition": "Celebrity Recognition",
    "object_localization": "Object Localization",
    "attribute_recognition": "Attribute Recognition",
    "action_recognition": "Action Recognition",
    "attribute_comparison": "Attribute Comparison",
    "nature_relation": "Nature Relation",
    "physical_relation": "Physical Relation",
    "social_relation": "Social Relation",
    "identity_reasoning": "Identity Reasoning",
    "function_reasoning": "Function Reasoning",
    "physical_property_reasoning": "Physical Property Reasoning",
    "structuralized_imagetext_understanding": "Structuralized Image-text Understanding",
    "future_prediction": "Future Prediction",
    "image_topic": "Image Topic",
    "image_emotion": "Image Emotion",
    "image_scene": "Image Scene",
    "image_style": "Image Style",
}
"""Display names of Table A."""

EXCLUDED_CATEGORIES: frozenset[str] = frozenset({"image_quality", "spatial_relationship"})
"""MMBench leaf categories that are not MM-UPD abilities (appendix 0.B.1 and Table A)."""

NO_IVQD_ABILITIES: frozenset[str] = frozenset(
    {
        "identity_reasoning",
        "structuralized_imagetext_understanding",
        "future_prediction",
        "image_topic",
        "image_emotion",
        "image_style",
    }
)
"""Abilities with no IVQD question in Table B (#10, #13-#16, #18): their questions fit almost any image."""


def ability_index(category: str) -> int | None:
    """Return the Table A index (1-18) of an MMBench category, or None when it is not an MM-UPD ability.

    Args:
        category: MMBench leaf category, e.g. ``"attribute_recognition"``.

    Returns:
        1..18, or None (e.g. for ``image_quality``).
    """
    try:
        return ABILITIES.index(category) + 1
    except ValueError:
        return None
