"""Writes that change providers' state. Each endpoint write is one transaction that locks the
provider rows it changes and checks and bumps their generations where Placement does; the
building blocks that run in their caller's transaction say so. Keyword-only and annotated,
they take domain values and raise the domain errors of ``placementsite.core.exceptions``
(README, "Layout")."""
