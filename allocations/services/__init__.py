"""Writes of allocations, one transaction each, in the lock order of allocations.py."""
