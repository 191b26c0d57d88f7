"""URLs of the allocations app's Placement endpoints."""

from django.urls import path

from . import views

urlpatterns = [
    path("allocations", views.AllocationsView.as_view()),
    path("allocations/<str:consumer_uuid>", views.ConsumerAllocationsView.as_view()),
    path("resource_providers/<str:uuid>/allocations", views.ProviderAllocationsView.as_view()),
    path("resource_providers/<str:uuid>/usages", views.ProviderUsagesView.as_view()),
    path("usages", views.UsagesView.as_view()),
    path("reshaper", views.ReshaperView.as_view()),
]
