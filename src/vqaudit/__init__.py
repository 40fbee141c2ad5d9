"""vqaudit: does a vision-language model answer when the image supports an answer, and abstain when it does not?"""

from __future__ import annotations

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    """``vqaudit.__version__``, read from the installed package's metadata on first use (PEP 562).

    Lazily, because ``importlib.metadata`` costs more than the rest of ``vqaudit --help``'s own imports; a
    source tree without an install reports ``0.0.0``.
    """
    if name != "__version__":
        raise AttributeError(f"module 'vqaudit' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("vqaudit")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
        found = "0.0.0"
    globals()["__version__"] = found
    return found
