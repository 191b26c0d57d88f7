"""Scheduling models (flavors, request specs) arrive with the scheduler."""
