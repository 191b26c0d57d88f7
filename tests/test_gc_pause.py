"""cyclic_gc_paused: the collector is off inside, back as it was after, nesting included."""

import gc

import pytest

from placementsite.core.gc_pause import cyclic_gc_paused


def test_pauses_and_restores_even_when_the_block_raises():
    assert gc.isenabled()
    with pytest.raises(RuntimeError), cyclic_gc_paused():
        assert not gc.isenabled()
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_nested_pauses_keep_it_off_until_the_outermost_ends():
    with cyclic_gc_paused():
        with cyclic_gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_leaves_a_collector_that_was_off_off():
    gc.disable()
    try:
        with cyclic_gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
