"""Model calls on a Ray cluster: replica actors that each hold a backend, behind one driver-side Backend.

``vqaudit run --executor ray`` loads the model not in the driver but in ``replicas`` Ray actors (an HTTP
client per actor, all calling the spec's endpoint; a ``vllm:`` engine per actor on its own GPUs). The driver
keeps the one cached runner (:func:`vqaudit.backends.runner.ask_cached`): it decides which requests are missing,
sends each to the least busy replica, and stores every reply in the run's SQLite cache the moment it comes back,
so resume, ``--retry-errors``, the early stop and scoring are exactly those of a local run.

Replicas start only when there is something to ask: for a backend that is cheap to build (no ``check`` hook in
its module, :func:`vqaudit.backends.registry.check_backend`; e.g. ``openai:``) the driver computes the cache
identity itself and starts the replicas at the first call, so a run whose replies are all cached loads nothing.
A backend whose loading is the expensive part (``hf:``, ``vllm:``: the identity is the weights' fingerprint,
computed where the weights are) starts its replicas at once.

A replica whose worker process or node dies is replaced by a new replica in its slot (with its share of
``--concurrency``), at most :data:`REPLICA_REPLACEMENTS` times per slot, and its calls in flight are sent again;
every loss is said on stderr and recorded (:attr:`RayReplicas.losses`, ``run.json`` ``replicas_lost``). A slot
past its limit is routed around; when every replica is lost the run stops with an error, and everything received
before stays cached (rerun to ask only the rest). Every replica must report the same cache identity (the same
weights fingerprint or hub commit), else the run is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import sys
import uuid
from datetime import UTC, datetime
from typing import Any

from vqaudit.backends.base import Backend, BackendCallError, Completion, ModelOptions, Request
from vqaudit.backends.registry import backend_kind, load_backend
from vqaudit.backends.runner import WORKERS_PER_SLOT
from vqaudit.errors import VqauditError
from vqaudit.executors import Executor, RayExecutor
from vqaudit.ray_session import ray_session, start_ray
from vqaudit.store import ReplicaLoss

REPLICA_REPLACEMENTS = 2
"""Times a replica slot whose actor died gets a new actor (its calls in flight are re-sent to the others or to it)."""

REPLICA_PREFIX = "vqaudit-replica"
"""Replica actors are named ``vqaudit-replica-RUN-I`` (``-I.K`` for the K-th replacement in slot I;
``ray.util.list_named_actors()`` lists them)."""


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
        """``(reply, None, False)`` (a str or a Completion), or ``(None, error, fatal)`` from a BackendCallError."""
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
        actors: the replica actor handles, one per slot (empty until the replicas start).
        losses: every replica lost so far, in order (``run.json`` ``replicas_lost``).
    """

    def __init__(self, spec: str, identity: str, ray: Any, actor_class: Any, options: ModelOptions, count: int) -> None:
        self._spec = spec
        self.identity = identity
        self._ray = ray
        self._actor_class = actor_class
        self._options = options
        self._count = count
        self._run_id = uuid.uuid4().hex[:8]
        self.actors: list[Any] = []
        self.losses: list[ReplicaLoss] = []
        self._busy = [0] * count
        self._lost: set[int] = set()
        self._replaced = [0] * count
        self._replacing: dict[int, asyncio.Task[None]] = {}
        self._starting: asyncio.Task[None] | None = None
        self._driver_copy: Backend | None = None  # built only to read the identity (closed by aclose)

    @classmethod
    def start(cls, executor: RayExecutor, spec: str, options: ModelOptions, replicas: int | None) -> RayReplicas:
        """Connect to Ray and prepare the replicas; start them now unless the driver knows the identity already.

        Raises:
            VqauditError: see :func:`load_backend_on`.
        """
        backend_kind(spec)  # a malformed spec fails here, before any actor starts
        ray = start_ray(executor)
        need = ray_resources(spec, options)
        count = replicas or _fit(ray.cluster_resources(), need, options.concurrency)
        each = dataclasses.replace(options, concurrency=-(-options.concurrency // count))
        # Ray does not restart a dead replica itself (max_restarts=0): the driver replaces it, so that every loss
        # is seen, said and recorded (a restart inside Ray is invisible to the driver)
        actor_class = ray.remote(
            max_restarts=0,
            max_task_retries=0,
            max_concurrency=max(WORKERS_PER_SLOT * each.concurrency, 1),
            scheduling_strategy="SPREAD",
            **need,
        )(_Replica)
        built = _built_in_driver(spec, options)
        identity = str(getattr(built, "identity", None) or built.spec) if built is not None else ""
        replicas_ = cls(spec, identity, ray, actor_class, each, count)
        replicas_._driver_copy = built
        if built is None:  # the model must be loaded to know its identity: start the replicas now
            replicas_.identity = replicas_._launch_sync()
        return replicas_

    @property
    def spec(self) -> str:
        """The model spec string."""
        return self._spec

    def _new_actor(self, slot: int) -> Any:
        suffix = f"{slot}" if not self._replaced[slot] else f"{slot}.{self._replaced[slot]}"
        return self._actor_class.options(name=f"{REPLICA_PREFIX}-{self._run_id}-{suffix}").remote(
            self._spec, self._options
        )

    def _launch_sync(self) -> str:
        """Start every replica and wait for them (the identity is not known before); return their identity."""
        self.actors = [self._new_actor(i) for i in range(self._count)]
        try:
            reports = self._ray.get([a.ready.remote() for a in self.actors])
        except Exception as exc:  # RayActorError and friends: the actor could not even start
            _kill(self._ray, self.actors)
            raise VqauditError(f"{self._spec}: a Ray replica failed to start: {_first_line(exc)}{_hint()}") from None
        return self._checked(reports, expected=None)

    async def _launch(self) -> None:
        """Start every replica at the first call and check they report the identity the driver computed."""
        self.actors = [self._new_actor(i) for i in range(self._count)]
        try:
            reports = await asyncio.gather(*(a.ready.remote() for a in self.actors))
        except Exception as exc:  # noqa: BLE001 - RayActorError and friends: the actor could not even start
            _kill(self._ray, self.actors)
            raise VqauditError(f"{self._spec}: a Ray replica failed to start: {_first_line(exc)}{_hint()}") from None
        self._checked(list(reports), expected=self.identity)

    def _checked(self, reports: list[tuple[str | None, str | None]], expected: str | None) -> str:
        problems = [p for _, p in reports if p is not None]
        identities = sorted({i for i, _ in reports if i is not None} | ({expected} if expected else set()))
        if problems or len(identities) != 1:
            _kill(self._ray, self.actors)
            raise VqauditError(
                problems[0]
                if problems
                else f"{self._spec}: the Ray replicas load different models (identities {identities}); "
                "give every node the same weights"
            )
        return identities[0]

    async def complete(self, request: Request) -> str | Completion:
        """Ask the least busy live replica; a replica found dead is replaced and the call sent again.

        Returns:
            The replica backend's reply as it returned it (a str, or a :class:`Completion` with the reasoning,
            finish reason and usage).

        Raises:
            BackendCallError: the replica's backend failed the call (after its own retries).
            VqauditError: the replicas failed to start, or every replica is lost (replies received before stay
                cached).
        """
        if not self.actors:
            if self._starting is None:
                self._starting = asyncio.ensure_future(self._launch())
            await asyncio.shield(self._starting)
        while True:
            live = [i for i in range(self._count) if i not in self._lost]
            if not live:
                if self._replacing:  # a replacement is starting: wait for it
                    await asyncio.wait(list(self._replacing.values()))
                    continue
                raise VqauditError(
                    f"{self._spec}: every Ray replica was lost; rerun the same command to ask only "
                    f"the views whose reply is missing{_hint()}"
                )
            index = min(live, key=lambda i: self._busy[i])
            actor = self.actors[index]
            self._busy[index] += 1
            try:
                text, error, fatal = await actor.complete.remote(request)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # RayActorError: the replica's process or node died
                if not _actor_lost(exc):
                    raise
                self._lose(index, actor, exc)
                continue
            finally:
                self._busy[index] -= 1
            if error is not None:
                raise BackendCallError(error, fatal=fatal)
            return text if isinstance(text, Completion) else str(text)

    def _lose(self, index: int, actor: Any, exc: Exception) -> None:
        """Record the loss of ``actor`` in slot ``index`` once, and start its replacement if the limit allows.

        The loss is recorded (:attr:`losses`, ``replaced`` False) and said on stderr at once, so a replacement
        still waiting for room in the cluster when the run ends leaves the loss recorded all the same.
        """
        if self.actors[index] is not actor or index in self._lost:
            return  # another call saw this loss first
        self._lost.add(index)
        loss = ReplicaLoss(
            replica=index, at=datetime.now(UTC).isoformat(timespec="seconds"), error=_first_line(exc), replaced=False
        )
        self.losses.append(loss)
        if self._replaced[index] >= REPLICA_REPLACEMENTS:
            self._say(
                f"Ray replica {index} of {self._spec} lost ({loss.error}); not replaced (slot {index} was "
                f"replaced {REPLICA_REPLACEMENTS} times already): the other replicas take its calls"
            )
            return
        self._replaced[index] += 1
        self._say(
            f"Ray replica {index} of {self._spec} lost ({loss.error}); starting a replacement "
            f"({self._replaced[index]} of at most {REPLICA_REPLACEMENTS} for this slot)"
        )
        self._replacing[index] = asyncio.ensure_future(self._replace(index, loss))

    async def _replace(self, index: int, loss: ReplicaLoss) -> None:
        try:
            new = self._new_actor(index)
            try:
                identity, problem = await new.ready.remote()
            except Exception as exc:  # noqa: BLE001 - the new actor died too, or could not be placed
                identity, problem = None, _first_line(exc)
            if problem is not None or identity != self.identity:
                _kill(self._ray, [new])
                self._say(
                    f"Ray replica {index} of {self._spec}: its replacement failed "
                    f"({problem or f'another identity: {identity}'}); the other replicas take its calls"
                )
                return
            _kill(self._ray, [self.actors[index]])
            self.actors[index] = new
            self._lost.discard(index)
            loss.replaced = True
            self._say(f"Ray replica {index} of {self._spec} replaced")
        finally:
            del self._replacing[index]

    @staticmethod
    def _say(line: str) -> None:
        print(f"vqaudit: {line}", file=sys.stderr, flush=True)

    async def aclose(self) -> None:
        """Close every live replica's backend, then end the actors (their resources go back to the cluster)."""
        for task in list(self._replacing.values()):
            task.cancel()
        if self._starting is not None and not self._starting.done():
            self._starting.cancel()
        live = [a for i, a in enumerate(self.actors) if i not in self._lost]
        await asyncio.gather(*(a.close.remote() for a in live), return_exceptions=True)
        _kill(self._ray, self.actors)
        if self._driver_copy is not None:
            await self._driver_copy.aclose()


def _built_in_driver(spec: str, options: ModelOptions) -> Backend | None:
    """The backend of ``spec`` built in the driver to read its cache identity (None: only a loaded model knows it).

    A backend module with a ``check`` hook loads something expensive (weights, an engine), and its identity is
    computed where the weights are (:func:`vqaudit.backends.registry.check_backend`); any other backend is cheap
    to build (no connection before the first call), so the driver builds it, reads ``identity``, and closes it
    with the replicas. A driver-side failure (e.g. a ``replay:`` file present on the nodes only) also gives None:
    the replicas start at once and report their own error.
    """
    import importlib

    row = backend_kind(spec)
    try:
        module = importlib.import_module(row.module)
    except ModuleNotFoundError:
        return None
    if callable(getattr(module, "check", None)):
        return None
    try:
        return load_backend(spec, options)
    except VqauditError:
        return None


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _hint() -> str:
    session = ray_session()
    return session.logs_hint() if session is not None else ""


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
