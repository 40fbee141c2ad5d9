"""Where the parallel maps run: this machine's processes (``local``) or a Ray cluster (``ray``).

Every CPU-bound map of vqaudit (building groups, :func:`vqaudit.suites.common.map_groups`; re-checking chart
certificates and designed faults, :mod:`vqaudit.suites.charts.verify`) calls ``current().map(fn, items, ...)``.
The CLI picks the executor once (``--executor local|ray``, ``--ray-address``) and installs it with
:func:`using`, so no builder or verifier knows which one runs it. Both yield ``fn(item)`` in item order, and
each item carries everything its result depends on (a group seeds its own generator from the build seed and its
index), so the output is the same bytes on any executor, worker count and node count.

The ``ray`` executor ships ``fn`` (pickled by reference: the module must be importable on every node) and the
items in chunks, one Ray task per chunk, at most two chunks per cluster CPU in flight; results come back to the
driver, which alone writes files. Each task also reports the versions of the libraries it used, and a worker
whose versions differ from the driver's is refused (its pixels could differ). A task whose worker dies is
retried by Ray (``max_retries``); a group is a pure function of its index, so a retry gives the same bytes.

Without ``--ray-address`` the ``ray`` executor starts a fresh local Ray instance of its own
(:func:`vqaudit.ray_session.start_ray`), never the cluster Ray's temp folder records; Ray's own messages go to a
log file in that instance's folder.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import signal
import sys
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextvars import ContextVar
from dataclasses import dataclass
from itertools import islice
from typing import Any, Protocol, TypeVar

from vqaudit.errors import VqauditError
from vqaudit.ray_session import ray_session, start_ray

A = TypeVar("A")
T = TypeVar("T")

WATCHED_MODULES = ("vqaudit", "numpy", "matplotlib", "PIL", "z3", "httpx")
"""Modules whose version a Ray worker reports when it has imported them; a mismatch with the driver is refused."""

TASK_RETRIES = 3
"""Times Ray re-runs a map task whose worker died (the results are pure functions of the items)."""

PR_SET_PDEATHSIG = 1
"""Linux ``prctl`` option: the signal the kernel sends a process when its parent dies (``<linux/prctl.h>``)."""

PARENT_POLL_S = 1.0
"""Seconds between two checks of a pool worker's parent where ``PR_SET_PDEATHSIG`` is not available."""


class Executor(Protocol):
    """Runs ``fn`` over items and yields the results in item order."""

    @property
    def name(self) -> str:
        """``local`` or ``ray`` (as in ``--executor``)."""
        ...

    def map(self, fn: Callable[[A], T], items: Iterable[A], *, workers: int, chunksize: int) -> Iterator[T]:
        """Yield ``fn(item)`` for every item, in order.

        Args:
            fn: a picklable function (module-level, or a ``functools.partial`` of one).
            items: the inputs, read lazily as results are consumed (``ray``) or all at once (``local``).
            workers: processes on this machine (``local``; 1: in this process); for ``ray``, the least number of
                chunks in flight (by default two per cluster CPU).
            chunksize: items per task.
        """
        ...


@dataclass(frozen=True)
class LocalExecutor:
    """This machine: in this process for ``workers <= 1``, else a pool of ``workers`` processes."""

    @property
    def name(self) -> str:
        """``local``."""
        return "local"

    def map(self, fn: Callable[[A], T], items: Iterable[A], *, workers: int, chunksize: int) -> Iterator[T]:
        """See :meth:`Executor.map`."""
        if workers <= 1:
            yield from map(fn, items)
            return
        with ProcessPoolExecutor(max_workers=workers, initializer=pool_worker_init, initargs=(os.getpid(),)) as pool:
            yield from pool.map(fn, items, chunksize=max(chunksize, 1))


def pool_worker_init(parent_pid: int) -> None:
    """Initializer of every local pool worker: it dies with its parent and leaves the signals to the parent.

    A new-user trial SIGKILLed ``vqaudit build charts --workers 2``: its workers stayed for good (parent pid 1,
    ~120 MB each, waiting on the dead parent's queue) and ignored SIGTERM, because a forked worker inherits the
    parent's Python SIGTERM handler (:mod:`vqaudit.signals`). So a worker:

    - takes SIGTERM's default action (it ends at once) and ignores SIGINT, so that Ctrl-C, which the terminal
      sends to the whole process group, is handled by the parent alone (it stops the pool);
    - on Linux asks the kernel for SIGKILL when its parent dies (``prctl(PR_SET_PDEATHSIG, SIGKILL)``; the
      parent is the thread that started the pool, which lives as long as the pool is used), then exits at once
      if the parent is already gone; elsewhere (or if ``prctl`` fails) a daemon thread checks ``os.getppid()``
      every :data:`PARENT_POLL_S` seconds and exits the worker when it changes.

    Args:
        parent_pid: ``os.getpid()`` of the process that starts the pool.
    """
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if not (sys.platform.startswith("linux") and _set_parent_death_signal(signal.SIGKILL)):
        threading.Thread(target=_watch_parent, args=(parent_pid,), name="vqaudit-parent-watch", daemon=True).start()
    if os.getppid() != parent_pid:  # the parent died before the death signal was set
        os._exit(1)


def _set_parent_death_signal(sig: int) -> bool:
    """``prctl(PR_SET_PDEATHSIG, sig)`` through libc; False if it is not available or fails."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent_pid: int) -> None:
    """Exit this process (a pool worker) once its parent is no longer ``parent_pid``."""
    while os.getppid() == parent_pid:
        time.sleep(PARENT_POLL_S)
    os._exit(1)


@dataclass(frozen=True)
class RayExecutor:
    """A Ray cluster: the one at ``address`` (``ray start --head`` prints it), or a local instance started here.

    Attributes:
        address: ``HOST:PORT`` of a running cluster's head (or ``auto``: the cluster this machine is a node of);
            None starts a fresh local Ray instance of this process's own (:func:`start_ray`: its own folder and
            ports, no dashboard, no usage statistics), shut down when the process ends.
        num_cpus: CPUs of a local instance (None: all of this machine's); ignored with ``address``.
    """

    address: str | None = None
    num_cpus: int | None = None

    @property
    def name(self) -> str:
        """``ray``."""
        return "ray"

    def map(self, fn: Callable[[A], T], items: Iterable[A], *, workers: int, chunksize: int) -> Iterator[T]:
        """See :meth:`Executor.map`; tasks run anywhere in the cluster, results arrive in item order.

        Raises:
            VqauditError: Ray is not installed, the cluster cannot be reached, a worker runs other library versions
                than the driver, or ``fn`` raised one (its message is kept).
        """
        ray = start_ray(self)
        expected = _fingerprint()
        task = ray.remote(max_retries=TASK_RETRIES)(_run_chunk)
        fn_ref = ray.put(fn)
        window = max(workers, 2 * int(ray.cluster_resources().get("CPU", 1)))
        chunks = _chunks(items, max(chunksize, 1))
        in_flight: deque[Any] = deque()
        try:
            for chunk in islice(chunks, window):
                in_flight.append(task.remote(fn_ref, chunk))
            while in_flight:
                try:
                    results, error, where = ray.get(in_flight.popleft())
                except ray.exceptions.RayError as exc:  # a worker or node lost after the retries, a system error
                    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                    session = ray_session()
                    hint = session.logs_hint() if session is not None else ""
                    raise VqauditError(
                        f"a Ray task failed after {TASK_RETRIES} retries: {first}; rerun the same "
                        f"command (a build leaves no partial folder){hint}"
                    ) from None
                if error is not None:
                    raise VqauditError(error)
                _check_versions(expected, where)
                next_chunk = next(chunks, None)
                if next_chunk is not None:
                    in_flight.append(task.remote(fn_ref, next_chunk))
                yield from results
        finally:
            for ref in in_flight:  # an error or an abandoned generator: stop what is still queued
                ray.cancel(ref)


def _chunks(items: Iterable[A], size: int) -> Iterator[list[A]]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def _run_chunk(fn: Callable[[A], T], chunk: list[A]) -> tuple[list[T], str | None, dict[str, str]]:
    """One Ray task: ``fn`` over a chunk; a user error comes back as its message (no remote traceback)."""
    try:
        results = [fn(item) for item in chunk]
    except VqauditError as exc:
        return [], str(exc), _fingerprint()
    return results, None, _fingerprint()


def _fingerprint() -> dict[str, str]:
    """Python, the host, and the version of every watched module imported in this process."""
    out = {"python": platform.python_version(), "host": platform.node()}
    for name in WATCHED_MODULES:
        module = sys.modules.get(name)
        if module is not None:
            out[name] = str(getattr(module, "__version__", "unknown"))
    out["zlib"] = zlib.ZLIB_RUNTIME_VERSION  # chart PNG bytes depend on it (suites/charts/render.py::png_bytes)
    return out


def _check_versions(driver: dict[str, str], worker: dict[str, str]) -> None:
    for name, version in worker.items():
        if name == "host":
            continue
        mine = driver.get(name)
        if mine is None and name in WATCHED_MODULES:
            mine = _module_version(name)
        if mine is not None and mine != version:
            raise VqauditError(
                f"ray worker on {worker.get('host', '?')} runs {name} {version} but this driver "
                f"{name} {mine}: install the same versions on every node (the output would "
                "not be byte-identical)"
            )


def _module_version(name: str) -> str | None:
    import importlib

    try:
        return str(getattr(importlib.import_module(name), "__version__", "unknown"))
    except ImportError:
        return None


EXECUTORS: dict[str, Callable[[str | None], Executor]] = {
    "local": lambda _address: LocalExecutor(),
    "ray": lambda address: RayExecutor(address=address),
}
"""The executor table: ``--executor NAME`` builds its row from ``--ray-address`` (None: start one here)."""

_LOCAL = LocalExecutor()
_CURRENT: ContextVar[Executor] = ContextVar("vqaudit_executor", default=_LOCAL)  # noqa: B039 - frozen


def make_executor(name: str, ray_address: str | None = None) -> Executor:
    """The executor ``--executor NAME`` names.

    Raises:
        VqauditError: an unknown name, or ``--ray-address`` given with another executor than ``ray``.
    """
    row = EXECUTORS.get(name)
    if row is None:
        raise VqauditError(f"--executor {name!r}: expected one of {', '.join(EXECUTORS)}")
    if ray_address is not None and name != "ray":
        raise VqauditError("--ray-address applies only to --executor ray")
    return row(ray_address)


def current() -> Executor:
    """The executor the parallel maps use now (``local`` unless :func:`using` installed another)."""
    return _CURRENT.get()


@contextlib.contextmanager
def using(executor: Executor) -> Iterator[Executor]:
    """Make ``executor`` the one :func:`current` returns inside the ``with`` block (restored after)."""
    token = _CURRENT.set(executor)
    try:
        yield executor
    finally:
        _CURRENT.reset(token)
