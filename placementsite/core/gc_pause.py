"""Pausing Python's cyclic garbage collector around work that allocates many small objects.

An allocation candidates answer or a scheduling pass over a thousand hosts allocates hundreds
of thousands of small containers, none of them in a reference cycle (reference counting frees
them all). The cyclic collector would still walk every live object of the process several
times during such a request: a fifth to a third of its time on 1,000 providers. What is
allocated meanwhile is bounded (the candidates cap), so pausing is safe.
"""

import gc
from contextlib import contextmanager


@contextmanager
def cyclic_gc_paused():
    """Pause the cyclic collector for the block; nested pauses keep it off until the
    outermost one ends."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
