"""URLs of the dashboard, mounted under /dashboard/."""

from django.urls import path

from . import (
    actions,
    consumer_views,
    hosts,
    migration_pages,
    overview,
    pools,
    provider_views,
    scheduling_views,
    server_groups,
    try_request,
)

app_name = "dashboard"

urlpatterns = [
    path("", overview.overview, name="overview"),
    path("providers/", provider_views.provider_list, name="providers"),
    path("providers/<uuid:uuid>/", provider_views.provider_detail, name="provider"),
    path("consumers/", consumer_views.consumer_list, name="consumers"),
    path("consumers/<uuid:uuid>/", consumer_views.consumer_detail, name="consumer"),
    path("projects/", consumer_views.project_list, name="projects"),
    path("traits/", provider_views.trait_list, name="traits"),
    path("resource-classes/", provider_views.resource_class_list, name="resource_classes"),
    path("aggregates/", provider_views.aggregate_list, name="aggregates"),
    path("aggregates/<uuid:uuid>/", provider_views.aggregate_detail, name="aggregate"),
    path("try/", try_request.try_request, name="try"),
    path("try/candidates/", try_request.try_candidates, name="try_candidates"),
    path("hosts/", hosts.host_list, name="hosts"),
    path("pools/", pools.pool_list, name="pools"),
    path("server-groups/", server_groups.group_list, name="server_groups"),
    path("search/", overview.search, name="search"),
    path("migrations/", migration_pages.migration_list, name="migrations"),
    path("flavors/", scheduling_views.flavor_list, name="flavors"),
    path("flavors/<int:pk>/fits/", scheduling_views.flavor_fits, name="flavor_fits"),
    path("schedule/", scheduling_views.schedule, name="schedule"),
    path("schedule/funnel/", scheduling_views.schedule_funnel, name="schedule_funnel"),
    # Actions: POST only (see actions.py).
    path(
        "migrations/<uuid:uuid>/confirm/",
        actions.migration_action,
        {"verb": "confirm"},
        name="migration_confirm",
    ),
    path(
        "migrations/<uuid:uuid>/revert/",
        actions.migration_action,
        {"verb": "revert"},
        name="migration_revert",
    ),
    path(
        "migrations/<uuid:uuid>/finish/",
        actions.migration_action,
        {"verb": "finish"},
        name="migration_finish",
    ),
    path("hosts/<str:hostname>/disable/", actions.host_disable, name="host_disable"),
    path("hosts/<str:hostname>/enable/", actions.host_enable, name="host_enable"),
    path("hosts/<str:hostname>/resync/", actions.host_resync, name="host_resync"),
    path("hosts/<str:hostname>/drain/", actions.host_drain_view, name="host_drain"),
    path("pools/<str:name>/disable/", pools.pool_disable, name="pool_disable"),
    path("pools/<str:name>/enable/", pools.pool_enable, name="pool_enable"),
    path("pools/<str:name>/delete/", pools.pool_delete, name="pool_delete"),
    path("server-groups/create/", server_groups.group_create, name="server_group_create"),
    path(
        "server-groups/<uuid:uuid>/delete/",
        server_groups.group_delete,
        name="server_group_delete",
    ),
]

# The addresses that act (POST only): the page tests leave them out.
ACTIONS = (
    "migration_confirm",
    "migration_revert",
    "migration_finish",
    "host_disable",
    "host_enable",
    "host_resync",
    "host_drain",
    "pool_disable",
    "pool_enable",
    "pool_delete",
    "server_group_create",
    "server_group_delete",
)
