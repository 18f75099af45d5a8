"""Where computer players think: a pool of worker processes, so no search holds the loop.

A search in a thread still holds the GIL, so every other table's clicks would wait while
it runs. `ThinkingPool` sends a search to a worker process instead, with only what it
needs: the seat's own view, the level, a seed and the seat's memory; the worker builds
its own ``random.Random(seed)`` and returns the action and the (updated) memory.

A worker that dies (or a search that overruns its timeout) gets a fresh pool and the
move is tried again; after that the move is thought out in the bot's own process, so a
move is never lost and a table never waits forever. With no workers every search runs in
a thread of the bot's process (what the tests use, for speed).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import logging
import multiprocessing
import os
import random
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from bot import metrics

log = logging.getLogger(__name__)

# A computer's choice: (the seat's own view, level, seeded rng, the seat's memory).
Choose = Callable[[Any, str, random.Random, Any], Any]
# A choose function by name, (module, qualified name), so a worker imports it itself.
ChooseRef = tuple[str, str]

# The longest search (expert) takes about a second; a worker that has not answered in
# this many seconds is taken as stuck: its pool is replaced and the move tried again.
SEARCH_TIMEOUT = 5.0
# Tries in a worker process before the move is thought out in the bot's own process.
ATTEMPTS = 2
# Starting the workers (a fresh Python each, importing the games' AI) may take this long.
START_TIMEOUT = 60.0
# Workers start a fresh interpreter ("spawn"): forking a process that runs threads
# (aiosqlite's, the event loop's executor) can copy a lock held by another thread.
START_METHOD = "spawn"
# Workers run at a lower CPU priority than the bot: on a busy machine the bot's answers to
# clicks come first, and a search (bounded by its time budget, not by its work) searches
# a little less.
WORKER_NICENESS = 5
# How often a worker checks that the bot that started it is still alive.
PARENT_CHECK_SECONDS = 0.5


def reference(choose: Choose) -> ChooseRef | None:
    """A module-level function by name, or None for one a worker cannot import."""
    module = getattr(choose, "__module__", None)
    name = getattr(choose, "__qualname__", None)
    if not module or not name or "<" in name:
        return None  # a lambda or a function defined inside another one
    return module, name


@functools.cache
def resolve(ref: ChooseRef) -> Choose:
    """The choose function a reference names, imported once per process."""
    module, name = ref
    found: Any = importlib.import_module(module)
    for part in name.split("."):
        found = getattr(found, part)
    return found  # type: ignore[no-any-return]


def think(choose: Choose, view: Any, level: str, seed: str, memory: Any) -> tuple[Any, Any]:
    """One decision: the action and the memory as ``choose`` left it."""
    action = choose(view, level, random.Random(seed), memory)
    return action, memory


def think_by_name(ref: ChooseRef, view: Any, level: str, seed: str, memory: Any) -> tuple[Any, Any]:
    """One decision in a worker process, by the choose function's name."""
    return think(resolve(ref), view, level, seed, memory)


def think_timed(
    ref: ChooseRef | Choose, view: Any, level: str, seed: str, memory: Any
) -> tuple[tuple[Any, Any], float]:
    """One decision (by name in a worker, or the function in a thread) and the CPU it took
    in the thread that thought it (the metrics are kept by the bot, not the worker)."""
    choose = resolve(ref) if isinstance(ref, tuple) else ref
    began = time.thread_time()
    result = think(choose, view, level, seed, memory)
    return result, time.thread_time() - began


def game_of(choose: Choose) -> str:
    """The metrics' game label of a choose function: its module's last name (bounded)."""
    return str(getattr(choose, "__module__", "") or "unknown").rsplit(".", 1)[-1]


def leave_with(parent: int, every: float = PARENT_CHECK_SECONDS) -> None:
    """End this worker as soon as the process that started it has gone.

    A bot killed outright (SIGKILL, the OOM killer) never shuts its pool down, and its
    idle workers would wait for work forever, holding memory and the bot's output pipes.
    When the parent dies the worker is re-parented, so its parent id changes.
    """

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def warm(modules: tuple[str, ...], parent: int | None = None) -> None:
    """Lower a new worker's priority and import the games' AI, so its first move is quick.

    With ``parent`` (the bot's process id) the worker also ends when the bot does.
    """
    if parent is not None:
        leave_with(parent)
    # Where there is no nice() the worker keeps the bot's priority.
    with contextlib.suppress(AttributeError, OSError):
        os.nice(WORKER_NICENESS)
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception:
            # A worker that cannot warm up still works: it imports on its first move.
            log.exception("a thinking worker could not import %s", module)


def started() -> float:
    """A worker's answer that it has started (and warmed up)."""
    return time.monotonic()


class ThinkingPool:
    """Runs computer players' searches away from the event loop.

    ``workers`` processes think in parallel (0: a thread of this process instead). Start
    it once with `start` and close it with `close`.
    """

    def __init__(
        self,
        workers: int,
        *,
        timeout: float = SEARCH_TIMEOUT,
        attempts: int = ATTEMPTS,
        start_timeout: float = START_TIMEOUT,
    ) -> None:
        if workers < 0:
            raise ValueError("workers must be 0 or more")
        self.workers = workers
        self.timeout = timeout
        self.attempts = attempts
        self.start_timeout = start_timeout
        # How many times a broken or stuck pool was replaced (for the logs and the tests).
        self.replacements = 0
        # How many searches a worker process answered.
        self.answered = 0
        self._modules: tuple[str, ...] = ()
        self._executor: ProcessPoolExecutor | None = None
        self._closed = False
        self._starter: asyncio.Task[None] | None = None
        # At most one search per worker is sent: the timeout then counts thinking only,
        # never the wait in a queue behind other tables' searches.
        self._slots = asyncio.Semaphore(max(workers, 1))
        # Held while a pool starts or is replaced; searches wait for it to be ready.
        self._starting = asyncio.Lock()

    @property
    def in_process(self) -> bool:
        """Whether searches run in this process (no workers, not started yet, or closed)."""
        return self._executor is None

    def processes(self) -> list[Any]:
        """The worker processes running now (multiprocessing.Process objects)."""
        executor = self._executor
        found = getattr(executor, "_processes", None) or {}
        return list(found.values())

    async def start(self, modules: Iterable[str] = ()) -> None:
        """Start the workers, importing ``modules`` (the games' AI) in each of them.

        They start in the background, beside the bot's own start-up; a search waits until
        they are ready (`ready`).
        """
        if self.workers == 0 or self._closed or self._starter is not None:
            return
        self._modules = tuple(sorted(set(modules)))
        await self._starting.acquire()  # released once the workers have started
        self._starter = asyncio.create_task(self._first_open(), name="thinking-start")

    async def _first_open(self) -> None:
        try:
            self._executor = await self._open()
            log.info("computer players think in %d worker processes", self.workers)
        except Exception:
            log.exception("no thinking worker could start; computers think in the bot's process")
        finally:
            self._starting.release()

    async def ready(self) -> None:
        """Wait until the workers have started (at once if there are none)."""
        if self._starter is not None:
            await asyncio.shield(self._starter)

    def _spawn(self) -> tuple[ProcessPoolExecutor, list[Future[Any]]]:
        """A new pool and one ping per worker, which makes the pool start every worker.

        Run in a thread: the pool starts its processes inside the first submit, and each
        start (a fork and an exec) can take a second on a loaded machine, which the event
        loop (and every click) would otherwise wait out.
        """
        executor = ProcessPoolExecutor(
            self.workers,
            mp_context=multiprocessing.get_context(START_METHOD),
            initializer=warm,
            initargs=(self._modules, os.getpid()),
        )
        return executor, [executor.submit(started) for _ in range(self.workers)]

    async def _open(self) -> ProcessPoolExecutor:
        """A new pool whose every worker has started and warmed up."""
        executor, submitted = await asyncio.to_thread(self._spawn)
        pings = [asyncio.wrap_future(ping) for ping in submitted]
        try:
            await asyncio.wait_for(asyncio.gather(*pings), self.start_timeout)
        except (BrokenProcessPool, TimeoutError):
            # Keep it anyway: a search on it fails, is tried again and at worst is thought
            # out in this process.
            log.exception("the thinking workers did not start")
        return executor

    async def _replace(self, broken: ProcessPoolExecutor) -> None:
        """Put a new pool in place of a broken or stuck one (once, however many noticed)."""
        async with self._starting:
            if self._executor is not broken or self._closed:
                return  # another search replaced it already, or the bot is closing
            for process in self.processes():
                process.kill()  # a stuck search never ends by itself
            broken.shutdown(wait=False, cancel_futures=True)
            self.replacements += 1
            metrics.pool_restarted()
            self._executor = None
            try:
                self._executor = await self._open()
            except Exception:
                log.exception("no new thinking worker could start; thinking in the bot's process")

    async def _current(self) -> ProcessPoolExecutor | None:
        """The pool to use, once any start or replacement in progress is done."""
        async with self._starting:
            return self._executor

    async def search(
        self, choose: Choose, view: Any, level: str, seed: str, memory: Any
    ) -> tuple[Any, Any]:
        """A computer's action and its updated memory, thought out away from the loop."""
        ref = reference(choose)
        if ref is None and self.workers:
            log.warning("%r cannot be sent to a worker; it thinks in a thread", choose)
        attempt = 0
        while ref is not None and attempt < self.attempts:
            executor = await self._current()
            if executor is None:
                break
            attempt += 1
            try:
                async with self._slots:
                    task = asyncio.get_running_loop().run_in_executor(
                        executor, think_timed, ref, view, level, seed, memory
                    )
                    result, cpu = await asyncio.wait_for(task, self.timeout)
                self.answered += 1
                metrics.decided(game_of(choose), level, cpu)
                return result
            except (BrokenProcessPool, TimeoutError) as error:
                log.warning(
                    "a thinking worker failed (%s, try %d of %d); starting a new pool",
                    type(error).__name__,
                    attempt,
                    self.attempts,
                )
                await self._replace(executor)
            except RuntimeError:
                if not self._closed:
                    raise
                break  # the pool was closed meanwhile: think here
        if ref is not None and attempt:
            log.error("no thinking worker answered for %s; thinking in the bot's process", seed)
        result, cpu = await asyncio.to_thread(think_timed, choose, view, level, seed, memory)
        metrics.decided(game_of(choose), level, cpu)
        return result

    async def close(self) -> None:
        """Stop the workers once their searches in progress end; later searches think here."""
        await self.ready()  # a pool still starting would outlive the bot
        self._closed = True
        executor, self._executor = self._executor, None
        if executor is not None:
            await asyncio.to_thread(executor.shutdown, wait=True, cancel_futures=True)
