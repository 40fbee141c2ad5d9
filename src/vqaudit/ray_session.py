"""The one Ray connection of this process: a fresh local instance of its own, or the cluster at ``--ray-address``.

:func:`start_ray` makes it (:class:`RaySession`: its own folder, Ray's messages routed to a log file there, never
the console), :func:`stop_ray` ends it, at the latest when the process exits. Without an address a fresh local
instance always starts, never the cluster Ray's temp folder records (a dead one would hang the command, a live
one would be taken over); with an address, a malformed or silent one is refused within
:data:`CONNECT_TIMEOUT_S`. The ``ray`` executor (:class:`vqaudit.executors.RayExecutor`) and the model replicas
(:mod:`vqaudit.backends.distributed`) both connect through it.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from vqaudit.errors import VqauditError

__all__ = ["CONNECT_TIMEOUT_S", "RAY_LOG", "RaySession", "RayTarget", "ray_session", "start_ray", "stop_ray"]


class RayTarget(Protocol):
    """Where to connect (:class:`vqaudit.executors.RayExecutor` is one).

    ``address``: ``HOST:PORT``, ``auto``, or None for a local instance; ``num_cpus``: CPUs of a local instance
    (None: all of this machine's).
    """

    @property
    def address(self) -> str | None:
        """The cluster head's address, or None."""
        ...

    @property
    def num_cpus(self) -> int | None:
        """CPUs of a local instance, or None."""
        ...


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


def start_ray(executor: RayTarget) -> Any:
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
