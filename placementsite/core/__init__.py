"""The bottom layer every app imports, and which imports no app: the domain errors, uuids,
JSON schemas, the microversion range, the plumbing every Placement endpoint shares (``api/``)
and the base classes of ``/api/`` (``rest/``). The site layer (``placementsite`` itself:
settings, URLs, Celery, dashboard, observability) sits above the apps and collects what each
contributes (``tests/test_layering.py`` keeps both arrows)."""
