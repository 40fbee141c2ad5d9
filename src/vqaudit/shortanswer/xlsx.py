"""The stdlib .xlsx reader, now :mod:`vqaudit.xlsx` (the UPD loaders below the audit layer read sheets too)."""

from vqaudit.xlsx import read_xlsx_rows

__all__ = ["read_xlsx_rows"]
