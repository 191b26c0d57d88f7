"""URLs of the dashboard, mounted under /dashboard/."""

from django.urls import path

from . import actions, hosts, migrations, pools, scheduling_views, server_groups, views

app_name = "dashboard"

urlpatterns = [
    path("", views.overview, name="overview"),
    path("providers/", views.provider_list, name="providers"),
    path("providers/<uuid:uuid>/", views.provider_detail, name="provider"),
    path("consumers/", views.consumer_list, name="consumers"),
    path("consumers/<uuid:uuid>/", views.consumer_detail, name="consumer"),
    path("projects/", views.project_list, name="projects"),
    path("traits/", views.trait_list, name="traits"),
    path("resource-classes/", views.resource_class_list, name="resource_classes"),
    path("aggregates/", views.aggregate_list, name="aggregates"),
    path("aggregates/<uuid:uuid>/", views.aggregate_detail, name="aggregate"),
    path("try/", views.try_request, name="try"),
    path("try/candidates/", views.try_candidates, name="try_candidates"),
    path("hosts/", hosts.host_list, name="hosts"),
    path("pools/", pools.pool_list, name="pools"),
    path("server-groups/", server_groups.group_list, name="server_groups"),
    path("search/", views.search, name="search"),
    path("migrations/", migrations.migration_list, name="migrations"),
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
