"""Pictures by what they show: a scene, how it is painted, its key, and a small cache.

The key is a digest of exactly what a picture shows (its scene and its painter), so one
state is painted once however many people look, and a message's picture is uploaded
again only when that key changes.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bot import metrics

FILENAME = "table-picture.png"


@dataclass(frozen=True, slots=True)
class Picture:
    """A picture to paint: what it shows, the painter, and its alt text."""

    scene: Any  # a frozen dataclass of plain values
    paint: Callable[[Any], bytes]
    alt: str
    key: str = field(init=False)

    def __post_init__(self) -> None:
        painter = f"{self.paint.__module__}.{self.paint.__qualname__}"
        digest = hashlib.sha256(repr((painter, self.scene)).encode("utf-8")).hexdigest()
        object.__setattr__(self, "key", digest[:32])


class PictureCache:
    """PNG bytes by picture key, at most ``max_bytes`` of them; the least recently used are
    dropped. Thread-safe.

    A message keeps its picture once uploaded, so the cache only spares repainting a state
    shown again soon (several lookers, a retried edit): a few recent pictures per table are
    enough, and its bound in bytes keeps memory flat however many tables run.
    """

    def __init__(self, capacity: int = 256, max_bytes: int = 1_000_000) -> None:
        self.capacity = capacity
        self.max_bytes = max_bytes
        self.bytes = 0
        self._pngs: OrderedDict[str, bytes] = OrderedDict()
        self._lock = threading.Lock()
        self.painted = 0  # pictures actually painted (misses)

    def get(self, key: str) -> bytes | None:
        """The cached PNG for a key, or None."""
        with self._lock:
            png = self._pngs.get(key)
            if png is not None:
                self._pngs.move_to_end(key)
            return png

    def paint(self, picture: Picture) -> bytes:
        """The picture's PNG: from the cache, or painted now and kept."""
        png = self.get(picture.key)
        if png is not None:
            return png
        began = time.thread_time()  # the painter thread's own CPU
        png = picture.paint(picture.scene)
        metrics.painted(time.thread_time() - began)
        with self._lock:
            self.painted += 1
            old = self._pngs.pop(picture.key, None)
            self.bytes += len(png) - (0 if old is None else len(old))
            self._pngs[picture.key] = png
            while len(self._pngs) > self.capacity or (
                self.bytes > self.max_bytes and len(self._pngs) > 1
            ):
                _, dropped = self._pngs.popitem(last=False)
                self.bytes -= len(dropped)
        return png
