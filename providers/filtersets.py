"""The filter sets of the providers' lists (django-filter), one for each list: /api/ filters
with them (``/api/compute-nodes/``, ``/api/resource-classes/``, ``/api/resource-pools/``) and
so do the dashboard's Hosts and Pools pages, from the same query parameters. ``q`` is the
pages' search box (as NetBox's filter sets have one), taken as typed (not stripped)."""

import django_filters

from .models import ComputeNode, ResourceClass, ResourcePool
from .selectors.compute_nodes import HOST_STATES, host_state_q, stale_q
from .selectors.resource_pools import pool_stale_q


class ComputeNodeFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(
        field_name="hostname", lookup_expr="icontains", strip=False, label="hostname contains"
    )
    hostname = django_filters.CharFilter(lookup_expr="icontains")
    stale = django_filters.BooleanFilter(method="filter_stale")
    state = django_filters.ChoiceFilter(
        choices=HOST_STATES,
        method="filter_state",
        label="stale, disabled, sync errors (a plugin raised, a sync blocked or failed) or "
        "waiting for a sync",
    )

    class Meta:
        model = ComputeNode
        fields = ["q", "hostname", "enabled", "sync_status", "hypervisor_type", "state"]

    def filter_stale(self, queryset, _name, value):
        return queryset.filter(stale_q()) if value else queryset.exclude(stale_q())

    def filter_state(self, queryset, _name, value):
        return queryset.filter(host_state_q(state=value))


class ResourceClassFilter(django_filters.FilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains")
    type = django_filters.ChoiceFilter(field_name="kind", choices=ResourceClass.Kind.choices)

    class Meta:
        model = ResourceClass
        fields = ["name", "type"]


class ResourcePoolFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(
        field_name="name", lookup_expr="icontains", strip=False, label="name contains"
    )
    name = django_filters.CharFilter(lookup_expr="icontains")
    stale = django_filters.BooleanFilter(method="filter_stale")

    class Meta:
        model = ResourcePool
        fields = ["q", "name", "kind", "enabled", "sync_status"]

    def filter_stale(self, queryset, _name, value):
        return queryset.filter(pool_stale_q()) if value else queryset.exclude(pool_stale_q())
