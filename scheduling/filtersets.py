"""The filter sets of the scheduler's lists (django-filter): /api/ filters with them
(``/api/flavors/``, ``/api/servers/``, ``/api/migrations/``, ``/api/server-groups/``) and so
does the dashboard's Server groups page, from the same query parameters (``q``, its search
box, as NetBox's filter sets have one)."""

import django_filters
from django.db.models import Q

from placementsite.core import uuids

from .models import Flavor, Migration, Server, ServerGroup


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


class MigrationFilter(django_filters.FilterSet):
    status = django_filters.MultipleChoiceFilter(choices=Migration.Status.choices)
    kind = django_filters.ChoiceFilter(choices=Migration.Kind.choices)
    server = django_filters.UUIDFilter(field_name="server_uuid")
    host = django_filters.CharFilter(method="filter_host", label="source or destination host")
    older_than = django_filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="lt")
    in_flight = django_filters.BooleanFilter(method="filter_in_flight")

    class Meta:
        model = Migration
        fields = ["status", "kind", "server", "host", "older_than", "in_flight"]

    def filter_host(self, queryset, name, value):
        match = Q(source__name=value) | Q(dest__name=value)
        named = uuids.parse(value)
        if named is not None:
            match |= Q(source__uuid=named) | Q(dest__uuid=named)
        return queryset.filter(match)

    def filter_in_flight(self, queryset, name, value):
        if value:
            return queryset.filter(status__in=Migration.IN_FLIGHT)
        return queryset.exclude(status__in=Migration.IN_FLIGHT)


class ServerGroupFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(method="filter_q", strip=False, label="name or project contains")

    class Meta:
        model = ServerGroup
        fields = ["q"]

    def filter_q(self, queryset, _name, value):
        return queryset.filter(Q(name__icontains=value) | Q(project_id__icontains=value))
