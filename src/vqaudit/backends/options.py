"""Options every backend kind's ``load(spec, target, options)`` receives, and typed reading of ``--model-arg``.

``ModelOptions`` is what the run stage knows about how to call a model; ``args`` holds the free-form
``--model-arg KEY=VALUE`` pairs, which each backend reads with :class:`ModelArgs` so that a misspelt key or a
bad value is one VqauditError naming the spec, the key and what was expected.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from vqaudit.errors import VqauditError

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def parse_model_args(pairs: Iterable[str], option: str = "--model-arg") -> tuple[tuple[str, str], ...]:
    """Parse repeated ``--model-arg KEY=VALUE`` strings (the one parser of them; ``--judge-arg`` too).

    Args:
        pairs: strings of the form ``KEY=VALUE``; the key is stripped, the value is kept as given (it may contain
            ``=`` and may be empty).
        option: the CLI option the pairs were given with (``--model-arg`` or ``--judge-arg``), named in errors.

    Returns:
        ``((KEY, VALUE), ...)`` in the given order (:attr:`vqaudit.backends.base.ModelOptions.args`).

    Raises:
        VqauditError: naming the bad pair: a string without ``=``, an empty or blank key, or a key given twice.
    """
    args: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise VqauditError(f"{option} {pair!r}: expected KEY=VALUE (e.g. {option} dtype=bfloat16)")
        if key in args:
            raise VqauditError(f"{option} {pair!r}: key {key!r} is given twice ({args[key]!r} and {value!r})")
        args[key] = value
    return tuple(args.items())


def parse_bool(value: str) -> bool | None:
    """``value`` as a bool (true/false, yes/no, on/off, 1/0, any case, blanks around ignored), or None."""
    low = value.strip().lower()
    return True if low in _TRUE else False if low in _FALSE else None


class ModelArgs:
    """Typed, checked reads of one backend's ``--model-arg`` pairs.

    Each ``take_*`` call consumes one key; ``finish()`` then raises on any key that was given but never read,
    naming the keys the backend knows.
    """

    def __init__(self, spec: str, args: Mapping[str, str], known: Iterable[str], option: str = "--model-arg") -> None:
        """Start reading ``args`` for the backend loaded from ``spec``.

        Args:
            spec: the model spec (named in every error).
            args: the ``--model-arg`` pairs.
            known: every key this backend accepts (listed in the error for an unknown key).
            option: the CLI option the pairs were given with (``--model-arg`` or ``--judge-arg``), named in errors.
        """
        self.spec = spec
        self._args = dict(args)
        self._known = tuple(known)
        self._option = option

    def _error(self, key: str, value: str, expected: str) -> VqauditError:
        return VqauditError(f"model spec {self.spec!r}: {self._option} {key}={value!r}: expected {expected}")

    def take_str(self, key: str, default: str | None = None, *, choices: Iterable[str] | None = None) -> str | None:
        """Return the value of ``key`` (``default`` when absent), checked against ``choices`` if given.

        Raises:
            VqauditError: the value is empty or not one of ``choices``.
        """
        value = self._args.pop(key, None)
        if value is None:
            return default
        allowed = tuple(choices) if choices is not None else None
        if not value.strip() or (allowed is not None and value not in allowed):
            raise self._error(key, value, " or ".join(allowed) if allowed else "a nonempty value")
        return value

    def take_bool(self, key: str, default: bool) -> bool:
        """Return ``key`` as a bool (true/false, yes/no, on/off, 1/0, any case); ``default`` when absent.

        Raises:
            VqauditError: any other value.
        """
        value = self._args.pop(key, None)
        if value is None:
            return default
        parsed = parse_bool(value)
        if parsed is None:
            raise self._error(key, value, "true or false")
        return parsed

    def take_int(self, key: str, default: int | None, *, minimum: int = 1, maximum: int = 1 << 30) -> int | None:
        """Return ``key`` as an integer in ``[minimum, maximum]``; ``default`` when absent.

        Raises:
            VqauditError: not a decimal integer, or out of range.
        """
        value = self._args.pop(key, None)
        if value is None:
            return default
        text = value.strip()
        if not text.lstrip("-").isdecimal() or not minimum <= int(text) <= maximum:
            raise self._error(key, value, f"an integer from {minimum} to {maximum}")
        return int(text)

    def take_float(self, key: str, default: float | None, *, minimum: float, maximum: float) -> float | None:
        """Return ``key`` as a finite float in ``[minimum, maximum]``; ``default`` when absent.

        Raises:
            VqauditError: not a number, or out of range (NaN is out of every range).
        """
        value = self._args.pop(key, None)
        if value is None:
            return default
        try:
            number = float(value)
        except ValueError:
            number = float("nan")
        if not minimum <= number <= maximum:
            raise self._error(key, value, f"a number from {minimum} to {maximum}")
        return number

    def finish(self) -> None:
        """Raise on any key that was given but not read.

        Raises:
            VqauditError: naming the unknown keys and listing the known ones.
        """
        if self._args:
            unknown = ", ".join(sorted(self._args))
            raise VqauditError(
                f"model spec {self.spec!r}: unknown {self._option} {unknown}; this backend takes "
                f"{', '.join(self._known) or 'none'}"
            )
