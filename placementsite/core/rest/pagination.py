"""Every list under /api/ is paged, so no request reads an unbounded table."""

from rest_framework.pagination import LimitOffsetPagination


class ApiPagination(LimitOffsetPagination):
    default_limit = 100
    max_limit = 1000
