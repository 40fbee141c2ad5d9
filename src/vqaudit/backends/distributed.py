"""Model calls on a Ray cluster: replica actors that each hold a backend, behind one driver-side Backend.

``vqaudit run --executor ray`` loads the model not in the driver but in ``replicas`` Ray actors (an HTTP
client per actor, all calling the spec's endpoint; a ``vllm:`` engine per actor on its own GPUs). The driver
keeps the one cached runner (:func:`vqaudit.backends.runner.ask_cached`): it decides which requests are missing,
sends each to the least busy replica, and stores every reply in the run's SQLite cache the moment it comes back,
so resume, ``--retry-errors``, the early stop and scoring are exactly those of a local run.

A replica whose worker process or node dies is restarted by Ray and its calls in flight are re-sent
(``max_restarts`` / ``max_task_retries``); a replica that stays lost is routed around; when every replica is
lost the run stops with an error, and everything received before stays cached (rerun to ask only the rest).
Every replica must report the same cache identity (the same weights fingerprint or hub commit), else the run
is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import uuid
from typing import Any

from vqaudit.backends.base import Backend, BackendCallError, Completion, ModelOptions, Request
from vqaudit.backends.registry import backend_kind, load_backend
from vqaudit.backends.runner import WORKERS_PER_SLOT
from vqaudit.errors import VqauditError
from vqaudit.executors import Executor, RayExecutor, start_ray

REPLICA_RESTARTS = 2
"""Times Ray restarts a replica whose process died (its calls in flight are re-sent to the new one)."""

REPLICA_PREFIX = "vqaudit-replica"
"""Replica actors are named ``vqaudit-replica-RUN-I`` (``ray.util.list_named_actors()`` lists them)."""


def load_backend_on(executor: Executor, spec: str, options: ModelOptions, *, replicas: int | None = None) -> Backend:
    """The backend of ``spec`` on ``executor``: in this process (``local``) or as Ray replicas (``ray``).

    Args:
        executor: from :func:`vqaudit.executors.make_executor`.
        spec: model spec (``KIND:TARGET``).
        options: model options; with Ray each replica gets ``concurrency / replicas`` (rounded up) of them.
        replicas: Ray replicas (None: as many as the cluster's CPUs, or GPUs for a backend that needs them,
            hold; at most ``options.concurrency``).

    Raises:
        VqauditError: what :func:`~vqaudit.backends.registry.load_backend` raises (for Ray, as reported by the
            replicas), the ``[ray]`` extra missing, too few cluster resources, or replicas that disagree about
            the model's identity.
    """
    if not isinstance(executor, RayExecutor):
        return load_backend(spec, options)
    return RayReplicas.start(executor, spec, options, replicas)


def ray_resources(spec: str, options: ModelOptions) -> dict[str, float]:
    """The Ray resources one replica of ``spec`` needs: its module's ``ray_resources(spec, options)``, else 1 CPU.

    Raises:
        VqauditError: a malformed or unknown spec.
    """
    import importlib

    row = backend_kind(spec)
    try:
        module = importlib.import_module(row.module)
    except ModuleNotFoundError:  # the extra lives on the workers only: assume one GPU for GPU backends
        return {"num_gpus": 1.0} if row.extra == "vllm" else {"num_cpus": 1.0}
    hook = getattr(module, "ray_resources", None)
    return dict(hook(spec, options.without_generation())) if callable(hook) else {"num_cpus": 1.0}


class _Replica:
    """The body of one replica actor: one backend loaded in a Ray worker."""

    def __init__(self, spec: str, options: ModelOptions) -> None:
        self.backend: Backend | None = None
        self.problem: str | None = None
        try:
            self.backend = load_backend(spec, options)
        except VqauditError as exc:
            self.problem = str(exc)

    def ready(self) -> tuple[str | None, str | None]:
        """``(cache identity, None)`` once loaded, or ``(None, the load error)``."""
        if self.backend is None:
            return None, self.problem
        return str(getattr(self.backend, "identity", None) or self.backend.spec), None

    def pid(self) -> int:
        """The worker's process id (tests kill it)."""
        return os.getpid()

    async def complete(self, request: Request) -> tuple[str | Completion | None, str | None, bool]:
        """``(reply, None, False)``, or ``(None, error, fatal)`` from the backend's BackendCallError."""
        if self.backend is None:
            return None, self.problem, True
        try:
            return await self.backend.complete(request), None, False
        except BackendCallError as exc:
            return None, str(exc) or type(exc).__name__, exc.fatal

    async def close(self) -> None:
        """Close the backend (connections, batchers)."""
        if self.backend is not None:
            await self.backend.aclose()


class RayReplicas:
    """The driver-side Backend of a model loaded in Ray replica actors (see the module docstring).

    Attributes:
        identity: the replicas' common cache identity.
        actors: the replica actor handles.
    """

    def __init__(self, spec: str, identity: str, actors: list[Any], ray: Any) -> None:
        self._spec = spec
        self.identity = identity
        self.actors = actors
        self._ray = ray
        self._busy = [0] * len(actors)
        self._lost: set[int] = set()

    @classmethod
    def start(cls, executor: RayExecutor, spec: str, options: ModelOptions, replicas: int | None) -> RayReplicas:
        """Start the replicas, wait until each has loaded the model, and check they agree on its identity.

        Raises:
            VqauditError: see :func:`load_backend_on`.
        """
        backend_kind(spec)  # a malformed spec fails here, before any actor starts
        ray = start_ray(executor)
        need = ray_resources(spec, options)
        count = replicas or _fit(ray.cluster_resources(), need, options.concurrency)
        each = dataclasses.replace(options, concurrency=-(-options.concurrency // count))
        run_id = uuid.uuid4().hex[:8]
        actor_class = ray.remote(
            max_restarts=REPLICA_RESTARTS, max_task_retries=REPLICA_RESTARTS,
            max_concurrency=max(WORKERS_PER_SLOT * each.concurrency, 1), scheduling_strategy="SPREAD", **need,
        )(_Replica)
        actors = [actor_class.options(name=f"{REPLICA_PREFIX}-{run_id}-{i}").remote(spec, each)
                  for i in range(count)]
        try:
            reports = ray.get([a.ready.remote() for a in actors])
        except Exception as exc:  # RayActorError and friends: the actor could not even start
            _kill(ray, actors)
            raise VqauditError(f"{spec}: a Ray replica failed to start: {exc}") from None
        problems = [p for _, p in reports if p is not None]
        identities = sorted({i for i, _ in reports if i is not None})
        if problems or len(identities) != 1:
            _kill(ray, actors)
            raise VqauditError(problems[0] if problems else
                               f"{spec}: the Ray replicas load different models (identities {identities}); "
                               "give every node the same weights")
        return cls(spec, identities[0], actors, ray)

    @property
    def spec(self) -> str:
        """The model spec string."""
        return self._spec

    async def complete(self, request: Request) -> str | Completion:
        """Ask the least busy live replica; re-route the call if its replica is lost for good.

        Raises:
            BackendCallError: the replica's backend failed the call (after its own retries).
            VqauditError: every replica is lost (replies received before stay cached).
        """
        while True:
            live = [i for i in range(len(self.actors)) if i not in self._lost]
            if not live:
                raise VqauditError(f"{self._spec}: every Ray replica was lost; rerun the same command to ask only "
                                   "the views whose reply is missing")
            index = min(live, key=lambda i: self._busy[i])
            self._busy[index] += 1
            try:
                text, error, fatal = await self.actors[index].complete.remote(request)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # RayActorError after its restarts: route around this replica
                if not _actor_lost(exc):
                    raise
                self._lost.add(index)
                continue
            finally:
                self._busy[index] -= 1
            if error is not None:
                raise BackendCallError(error, fatal=fatal)
            return text if isinstance(text, Completion) else str(text)

    async def aclose(self) -> None:
        """Close every live replica's backend, then end the actors (their resources go back to the cluster)."""
        live = [a for i, a in enumerate(self.actors) if i not in self._lost]
        await asyncio.gather(*(a.close.remote() for a in live), return_exceptions=True)
        _kill(self._ray, self.actors)


def _fit(resources: dict[str, float], need: dict[str, float], concurrency: int) -> int:
    """How many replicas needing ``need`` the cluster holds (at least 1, at most ``concurrency``)."""
    names = {"num_cpus": "CPU", "num_gpus": "GPU"}
    counts = [int(resources.get(names.get(k, k), 0) // v) for k, v in need.items() if v > 0]
    fit = min(counts) if counts else 1
    if fit < 1:
        raise VqauditError(f"the Ray cluster has no room for one replica (needs {need}, has {resources})")
    return max(1, min(fit, concurrency))


def _actor_lost(exc: Exception) -> bool:
    from ray.exceptions import RayActorError  # ActorDiedError, ActorUnavailableError are RayActorErrors

    return isinstance(exc, RayActorError)


def _kill(ray: Any, actors: list[Any]) -> None:
    for actor in actors:
        with contextlib.suppress(Exception):  # already gone
            ray.kill(actor, no_restart=True)
