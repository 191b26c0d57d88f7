"""Writes that change providers' state, one transaction each (see ARCHITECTURE)."""
