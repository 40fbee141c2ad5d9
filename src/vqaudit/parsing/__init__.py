"""Raw reply text -> decision and answer, keeping the raw reply beside the parse."""

from vqaudit.parsing.answerability import extract_json_object, extract_json_object_repaired, parse_answerability

__all__ = ["extract_json_object", "extract_json_object_repaired", "parse_answerability"]
