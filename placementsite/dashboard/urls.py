"""URLs of the dashboard, mounted under /dashboard/."""

from django.urls import path

from . import hosts, migrations, pools, scheduling_views, views

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
    path("hosts/", hosts.host_list, name="hosts"),
    path("pools/", pools.pool_list, name="pools"),
    path("search/", views.search, name="search"),
    path("migrations/", migrations.migration_list, name="migrations"),
    path("flavors/", scheduling_views.flavor_list, name="flavors"),
    path("schedule/", scheduling_views.schedule, name="schedule"),
]
