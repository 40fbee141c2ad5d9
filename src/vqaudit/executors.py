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

Without ``--ray-address`` the ``ray`` executor starts a fresh local Ray instance of its own (:func:`start_ray`),
never the cluster Ray's temp folder records; Ray's own messages go to a log file in that instance's folder.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import platform
import signal
import sys
import tempfile
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextvars import ContextVar
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any, Protocol, TypeVar

from vqaudit.errors import VqauditError

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
                    hint = _SESSION.logs_hint() if _SESSION is not None else ""
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


RAY_LOG = "ray.log"
"""The file, in the Ray session's own folder, that receives Ray's driver-side messages (never the console)."""

CONNECT_TIMEOUT_S = 30.0
"""Seconds within which ``--ray-address`` either connects or fails with one line (port probe plus ``ray.init``)."""


@dataclass
class RaySession:
    """The Ray connection this process holds (one per process; :func:`start_ray` makes it, :func:`stop_ray` ends it).

    Attributes:
        folder: this session's own folder (``vqaudit-ray-*`` in the system temp folder): Ray's temp folder for a
            local instance (its sockets, its ``session_*/logs``) and :data:`RAY_LOG`, Ray's driver-side messages.
        local: True for an instance started here (``--executor ray`` without ``--ray-address``).
        keep: keep ``folder`` after :func:`stop_ray` (set when an error names Ray's logs).
    """

    folder: Path
    local: bool
    keep: bool = False
    _undo: list[Callable[[], None]] = field(default_factory=list)
    _handler: Any = None

    @property
    def log_file(self) -> Path:
        """Ray's driver-side messages: its Python loggers and the cluster's error messages (node or worker lost)."""
        return self.folder / RAY_LOG

    def logs_hint(self) -> str:
        """``; Ray's logs: FOLDER`` for an error message (and keep the folder)."""
        self.keep = True
        return f"; Ray's logs: {self.folder}"

    def route_logs(self) -> None:
        """Send Ray's driver-side output to :attr:`log_file` instead of this process's stdout and stderr.

        Ray's Python loggers (``ray`` and below) get a file handler in place of their own handlers (``import ray``
        gives the ``ray`` logger one writing to stderr) and stop propagating. The cluster's error
        messages (a node marked dead with the raylet's state dump, a worker killed) are printed on the driver's
        stdout by ``ray._private.worker.listen_error_messages`` through ``print_to_stdstream`` whatever
        ``log_to_driver`` says (Ray 2.60); that module-level function is replaced by one writing to the file.
        """
        import logging

        handler = logging.FileHandler(self.log_file, encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        logger = logging.getLogger("ray")
        saved = (logger.propagate, logger.level, logger.handlers[:])
        self._handler = handler
        self.attach_log()

        def undo_logger() -> None:
            handler.close()
            logger.propagate, logger.level, logger.handlers = saved

        self._undo.append(undo_logger)
        with contextlib.suppress(ImportError):
            import ray._private.worker as ray_worker

            printer = getattr(ray_worker, "print_to_stdstream", None)
            if callable(printer):

                def to_log(data: dict[str, Any], ignore_prefix: bool = False) -> None:
                    logger.error("[%s] %s", data.get("pid", "?"), "\n".join(map(str, data.get("lines", []))))

                ray_worker.print_to_stdstream = to_log
                self._undo.append(lambda: setattr(ray_worker, "print_to_stdstream", printer))

    def attach_log(self) -> None:
        """Make :attr:`log_file` the ``ray`` logger's only handler, at INFO, not propagating.

        Called before ``ray.init`` and again after it: ``import ray`` gives that logger a stderr handler, and
        ``ray.init`` removes every handler (Ray 2.60), after which a record would reach Python's last-resort
        handler, stderr.
        """
        import logging

        if self._handler is None:
            return
        logger = logging.getLogger("ray")
        logger.handlers = [self._handler]
        logger.propagate = False
        logger.setLevel(logging.INFO)

    def own_token(self) -> None:
        """Turn on Ray's token authentication for a local instance, with a token of its own held in the environment.

        Ray 2.60 turns token authentication on for a new ``ray.init()`` instance when ``RAY_AUTH_MODE`` is unset
        and then writes a token to ``~/.ray/auth_token`` if there is none (``ray._private.authentication.
        authentication_token_setup.enable_token_auth_by_default``); a later ``ray start --head`` finds that file and
        turns authentication on for the user's own cluster. So unless the user set ``RAY_AUTH_MODE``, this sets
        ``RAY_AUTH_MODE=token`` and a random ``RAY_AUTH_TOKEN`` (inherited by the instance's processes; nothing is
        written to disk) and refreshes Ray's cached config, as ``_enable_token_auth`` does. Where that refresh is
        not available (another Ray version), nothing is changed and Ray's default applies.
        """
        import secrets

        if "RAY_AUTH_MODE" in os.environ:
            return
        import importlib

        try:
            raylet = importlib.import_module("ray._raylet")
        except ImportError:
            return
        config, loader = getattr(raylet, "Config", None), getattr(raylet, "AuthenticationTokenLoader", None)
        if config is None or loader is None:
            return
        saved = {name: os.environ.get(name) for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN")}
        os.environ["RAY_AUTH_MODE"] = "token"
        os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)

        def refresh() -> None:
            config.initialize("")
            loader.instance().reset_cache()

        def undo() -> None:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            with contextlib.suppress(Exception):
                refresh()

        self._undo.append(undo)
        try:
            refresh()
        except Exception:  # noqa: BLE001 - an unknown Ray version: fall back to its own default
            self._undo.pop()
            undo()

    def close(self) -> None:
        """Undo :meth:`route_logs` and :meth:`own_token`; remove :attr:`folder` unless :attr:`keep`."""
        import shutil

        while self._undo:
            self._undo.pop()()
        if not self.keep:
            shutil.rmtree(self.folder, ignore_errors=True)


_SESSION: RaySession | None = None


def ray_session() -> RaySession | None:
    """The Ray session :func:`start_ray` made in this process (None: none, or Ray was started by someone else)."""
    return _SESSION


def start_ray(executor: RayExecutor) -> Any:
    """Connect to the cluster at ``executor.address``, or start a local Ray instance of its own; return ``ray``.

    Once per process: an instance already running in this process (``ray.init`` called before, by an earlier call
    or a test) is reused as it is. Without an address a fresh instance always starts (``ray.init(address="local")``)
    in a new folder of its own (:class:`RaySession`) on ports Ray picks free: it never joins the cluster that
    Ray's temp folder records (``/tmp/ray/ray_current_cluster``, ``RAY_ADDRESS``), which hangs when that cluster
    is dead and takes it over when it is alive. Ray's own messages go to the session's :data:`RAY_LOG`, not the
    console. The instance is shut down by :func:`stop_ray`, at the latest when this process exits.

    Raises:
        VqauditError: the ``[ray]`` extra is missing (naming ``pip install 'vqaudit[ray]'``); ``address`` is
            malformed, no Ray head answers there, or it refuses this driver's authentication token (within
            :data:`CONNECT_TIMEOUT_S`); a local instance fails to start.
    """
    global _SESSION
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # never phone home
    try:
        import ray
    except ModuleNotFoundError:
        raise VqauditError(
            "--executor ray needs the [ray] extra (missing module 'ray'): pip install 'vqaudit[ray]'"
        ) from None
    if ray.is_initialized():
        return ray
    if executor.address is not None:
        _probe(executor.address)
    session = RaySession(folder=_session_folder(), local=executor.address is None)
    session.route_logs()
    captured = session.folder / "init-stderr.log"
    try:
        with _stderr_to(captured):
            if session.local:
                session.own_token()
                ray.init(
                    address="local",
                    _temp_dir=str(session.folder),
                    num_cpus=executor.num_cpus,
                    include_dashboard=False,
                    log_to_driver=False,
                    configure_logging=False,
                )
            else:
                ray.init(address=executor.address, log_to_driver=False, configure_logging=False)
    except Exception as exc:  # ConnectionError, RuntimeError, ValueError, ray.exceptions.AuthenticationError
        said = captured.read_text(encoding="utf-8", errors="replace") if captured.is_file() else ""
        with contextlib.suppress(Exception):
            ray.shutdown()
        message = _init_failure(executor.address, exc, said) + session.logs_hint()
        session.close()
        raise VqauditError(message) from None
    session.attach_log()
    _SESSION = session
    atexit.register(stop_ray)
    return ray


SOCKET_PATH_MAX = 107
"""Longest AF_UNIX socket path on Linux (``sun_path`` is 108 bytes); Ray refuses a temp folder whose socket paths,
``FOLDER/session_YYYY-MM-DD_HH-MM-SS_MICROS_PID/sockets/plasma_store``, are longer."""

SOCKET_SUFFIX_LEN = len("/session_2026-12-03_11-43-21_589957_4194304/sockets/plasma_store")
"""Characters Ray appends to its temp folder for its longest socket path (a 7-digit process id)."""


def _session_folder() -> Path:
    """A new ``vqaudit-ray-*`` folder in the system temp folder (``/tmp`` if that one is too long for Ray's sockets).

    Raises:
        OSError: the folder cannot be created.
    """
    parent = tempfile.gettempdir()
    if len(parent) + len("/vqaudit-ray-12345678") + SOCKET_SUFFIX_LEN > SOCKET_PATH_MAX and os.path.isdir("/tmp"):
        parent = "/tmp"
    return Path(tempfile.mkdtemp(prefix="vqaudit-ray-", dir=parent))


def stop_ray() -> None:
    """Shut down the Ray instance :func:`start_ray` started (or disconnect from the cluster it joined); no-op if none.

    The session's folder is removed unless an error named it (:meth:`RaySession.logs_hint`).
    """
    global _SESSION
    session, _SESSION = _SESSION, None
    if session is None:
        return
    import ray

    with contextlib.suppress(Exception):  # already shut down
        ray.shutdown()
    session.close()


@contextlib.contextmanager
def _stderr_to(path: Path) -> Iterator[None]:
    """Point file descriptor 2 at ``path`` inside the block (Ray's C++ client logs its connection retries there)."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(path, "ab") as sink:
            os.dup2(sink.fileno(), 2)
            try:
                yield
            finally:
                sys.stderr.flush()
                os.dup2(saved, 2)
    finally:
        os.close(saved)


def _init_failure(address: str | None, exc: Exception, said: str) -> str:
    """The one line for a failed ``ray.init``: refused authentication, an unreachable address, or a local failure."""
    text = f"{exc}\n{said}"
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if address is None:
        return f"--executor ray: a local Ray instance failed to start: {first}"
    if "InvalidAuthToken" in text or "Unauthenticated" in text or type(exc).__name__ == "AuthenticationError":
        return (
            f"--ray-address {address}: the Ray cluster refuses this driver's authentication token "
            "(InvalidAuthToken): set RAY_AUTH_MODE=token and the cluster's token (RAY_AUTH_TOKEN, or the file "
            "~/.ray/auth_token) as on its nodes (see docs/scale.md)"
        )
    return f"--ray-address {address}: cannot connect to a Ray cluster there: {first}"


PROBE_TIMEOUT_S = 5.0
"""Seconds to wait for the head node's port to accept a connection before ``ray.init`` (which then retries for
about 20 s before it gives up, Ray 2.60: ``ray._private.node.Node._init_gcs_client``)."""


def _probe(address: str) -> None:
    """Refuse at once a ``--ray-address`` that is malformed or whose port does not accept a connection.

    Raises:
        VqauditError: naming the address and what is wrong.
    """
    import socket

    if address == "auto":  # the address of the cluster this machine is a node of (ray start wrote it)
        return
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise VqauditError(
            f"--ray-address {address!r}: expected HOST:PORT (e.g. 10.0.0.1:6379), ray://HOST:PORT or auto"
        )
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_TIMEOUT_S):
            pass
    except OSError as exc:
        raise VqauditError(
            f"--ray-address {address}: no Ray head answers there ({exc}); start one with "
            "`ray start --head` or fix the address"
        ) from None


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
