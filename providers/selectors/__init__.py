"""Reads that answer questions about providers, as set-based queries."""
