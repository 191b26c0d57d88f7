"""django-prometheus's request middleware, cheaper per request, the same series.

Its ``PrometheusAfterMiddleware`` asks prometheus_client for each labelled series of every
request (``metric.labels(...)``: the label values checked, converted and looked up under a lock,
eight times a request); the series of a set of label values never changes, so it is looked up
once and kept here (its ``label_metric`` is the hook django-prometheus gives for this). Its
``process_request`` reads two headers through ``request.headers``, a dict of every header built
for them (nothing else on the API's path asks for it): read from ``META`` instead.
"""

from django_prometheus import middleware
from django_prometheus.utils import Time

# Label values come from the routed view, the status and the method (a client's own method
# name among them): past this many kept series, the rest are looked up each time.
_MOST_KEPT = 1000


class PrometheusAfterMiddleware(middleware.PrometheusAfterMiddleware):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._series = {}

    def label_metric(self, metric, request, response=None, **labels):
        if not labels:
            return metric
        key = (metric, *labels.items())
        series = self._series.get(key)
        if series is None:
            series = metric.labels(**labels)
            if len(self._series) < _MOST_KEPT:
                self._series[key] = series
        return series

    def process_request(self, request):
        # As django-prometheus's, the two headers read from META (the same values).
        meta = request.META
        self.label_metric(
            self.metrics.requests_by_method, request, method=self._method(request)
        ).inc()
        self.label_metric(
            self.metrics.requests_by_transport, request, transport=self._transport(request)
        ).inc()
        if meta.get("HTTP_X_REQUESTED_WITH") == "XMLHttpRequest":
            self.label_metric(self.metrics.requests_ajax, request).inc()
        content_length = int(meta.get("CONTENT_LENGTH") or 0)
        self.label_metric(self.metrics.requests_body_bytes, request).observe(content_length)
        request.prometheus_after_middleware_event = Time()
