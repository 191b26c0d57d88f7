"""Reads about consumers, allocations and usage, as set-based queries."""
