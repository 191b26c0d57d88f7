"""Filter sets of /api/compute-nodes/ and /api/resource-classes/."""

import django_filters

from ..models import ComputeNode, ResourceClass, ResourcePool
from ..selectors.compute_nodes import stale_q
from ..selectors.resource_pools import pool_stale_q


class ComputeNodeFilter(django_filters.FilterSet):
    hostname = django_filters.CharFilter(lookup_expr="icontains")
    stale = django_filters.BooleanFilter(method="filter_stale")

    class Meta:
        model = ComputeNode
        fields = ["hostname", "enabled", "sync_status", "hypervisor_type"]

    def filter_stale(self, queryset, _name, value):
        return queryset.filter(stale_q()) if value else queryset.exclude(stale_q())


class ResourceClassFilter(django_filters.FilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains")
    type = django_filters.ChoiceFilter(field_name="kind", choices=ResourceClass.Kind.choices)

    class Meta:
        model = ResourceClass
        fields = ["name", "type"]


class ResourcePoolFilter(django_filters.FilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains")
    stale = django_filters.BooleanFilter(method="filter_stale")

    class Meta:
        model = ResourcePool
        fields = ["name", "kind", "enabled", "sync_status"]

    def filter_stale(self, queryset, _name, value):
        return queryset.filter(pool_stale_q()) if value else queryset.exclude(pool_stale_q())
