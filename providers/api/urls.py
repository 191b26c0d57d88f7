"""URLs of the providers app's Placement endpoints."""

from django.urls import path

from . import aggregates, inventories, provider_traits, resource_classes, resource_providers, traits

urlpatterns = [
    path("resource_classes", resource_classes.ResourceClassListView.as_view()),
    path("resource_classes/<str:name>", resource_classes.ResourceClassDetailView.as_view()),
    path("traits", traits.TraitListView.as_view()),
    path("resource_providers", resource_providers.ResourceProviderListView.as_view()),
    path("resource_providers/<str:uuid>", resource_providers.ResourceProviderDetailView.as_view()),
    path("traits/<str:name>", traits.TraitDetailView.as_view()),
    path("resource_providers/<str:uuid>/traits", provider_traits.ProviderTraitsView.as_view()),
    path("resource_providers/<str:uuid>/aggregates", aggregates.ProviderAggregatesView.as_view()),
    path("resource_providers/<str:uuid>/inventories", inventories.InventoryListView.as_view()),
    path(
        "resource_providers/<str:uuid>/inventories/<str:resource_class>",
        inventories.InventoryDetailView.as_view(),
    ),
]
