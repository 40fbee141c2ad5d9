"""A classic OCR chart reader: reads a chart's pixels (and the question text) and answers lookups.

``read_chart`` (structure: frame, value axis, labels, legend, masks), ``read_lookup`` (the decision and the
measured value) and ``parse_lookup`` (the question's series and category). The OCR engine (RapidOCR, the
``[ocr]`` extra) is loaded only when a chart is first read.
"""

from vqaudit.backends.chart_reader.chart import Chart, read_chart
from vqaudit.backends.chart_reader.ocr import INSTALL_HINT, Ocr
from vqaudit.backends.chart_reader.reader import Reading, answer_text, parse_lookup, read_lookup

__all__ = ["INSTALL_HINT", "Chart", "Ocr", "Reading", "answer_text", "parse_lookup", "read_chart", "read_lookup"]
