"""Operating the service: health checks, Prometheus metrics, request logs, Celery context."""
