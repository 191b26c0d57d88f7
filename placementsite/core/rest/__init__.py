"""The project's own REST API under ``/api/``: everything Placement does not define.

Django REST framework conventions (routers, viewsets, serializers, django-filter,
pagination, an OpenAPI schema) with the Placement API's authentication, policy
and error format, so one token and one policy file govern both APIs.
"""
