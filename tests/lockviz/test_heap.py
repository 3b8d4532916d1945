"""The heap under a large audience (lockviz.live.audience): viewers' objects are frozen once they
join, without walking the whole heap each time; what viewers that left held in reference cycles
is collected once enough of them have left."""

from __future__ import annotations

import asyncio
import gc
import weakref

from lockviz.live import audience


class Held:
    """Something a viewer's connection holds in a reference cycle."""

    def __init__(self) -> None:
        self.me = self


def cycle() -> weakref.ref[Held]:
    return weakref.ref(Held())


async def test_a_join_freezes_without_thawing_and_enough_departures_collect_what_left() -> None:
    loop = asyncio.get_running_loop()
    audience._Heap.left, audience._Heap.deep = 0, False
    gc.collect()
    gone = cycle()
    gc.freeze()  # a viewer's objects, frozen when it joined
    try:
        audience._settle_heap(loop)  # another viewer joined: nothing thawed
        assert gone() is not None and gc.get_freeze_count() > 0
        for _ in range(audience.DEEP_AFTER_LEFT - 1):
            audience._left(viewers_here=10)
        audience._settle_heap(loop)
        assert gone() is not None  # not enough left yet to walk the whole heap
        audience._left(viewers_here=10)
        assert audience._Heap.deep
        audience._settle_heap(loop)
        assert gone() is None  # thawed and collected
        assert not audience._Heap.deep and audience._Heap.left == 0
    finally:
        gc.unfreeze()


async def test_departures_from_a_larger_audience_wait_until_more_left_than_stay() -> None:
    audience._Heap.left, audience._Heap.deep = 0, False
    for _ in range(audience.DEEP_AFTER_LEFT):
        audience._left(viewers_here=800)
    assert not audience._Heap.deep  # 200 left, 800 watch: a walk would stall them all
    for _ in range(600):
        audience._left(viewers_here=800 - 600)
    assert audience._Heap.deep
    audience._Heap.left, audience._Heap.deep = 0, False
