"""django-filter sets of /api/flavors/ and /api/servers/."""

import django_filters

from ..models import Flavor, Server


class FlavorFilter(django_filters.FilterSet):
    name = django_filters.CharFilter()
    name__contains = django_filters.CharFilter(field_name="name", lookup_expr="icontains")
    min_vcpus = django_filters.NumberFilter(field_name="vcpus", lookup_expr="gte")
    max_vcpus = django_filters.NumberFilter(field_name="vcpus", lookup_expr="lte")
    min_ram = django_filters.NumberFilter(field_name="ram", lookup_expr="gte")
    max_ram = django_filters.NumberFilter(field_name="ram", lookup_expr="lte")

    class Meta:
        model = Flavor
        fields = ["name", "is_public", "disabled"]


class ServerFilter(django_filters.FilterSet):
    flavor = django_filters.CharFilter(field_name="flavor__name")
    host = django_filters.CharFilter(field_name="host__name")
    host_uuid = django_filters.UUIDFilter(field_name="host__uuid")

    class Meta:
        model = Server
        fields = ["project_id", "user_id", "name"]
