"""vqaudit: does a vision-language model answer when the image supports an answer, and abstain when it does not?"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("vqaudit")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0"

__all__ = ["__version__"]
