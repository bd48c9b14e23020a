"""Work on several threads at once, for the tests of concurrent compilation."""

from __future__ import annotations

import threading
from collections.abc import Callable


def on_threads(work: Callable[[int], object], n: int) -> list:
    """work(0), ..., work(n - 1), each on a thread of its own, all let go together at a barrier:
    what each returned, or the exception it raised."""
    start = threading.Barrier(n)
    out: list = [None] * n

    def run(i: int) -> None:
        start.wait()
        try:
            out[i] = work(i)
        except BaseException as e:  # noqa: BLE001 - returned to the caller
            out[i] = e

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out
