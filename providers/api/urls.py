"""URLs of the providers app's Placement endpoints."""

from django.urls import path

from . import resource_classes

urlpatterns = [
    path("resource_classes", resource_classes.ResourceClassListView.as_view()),
    path("resource_classes/<str:name>", resource_classes.ResourceClassDetailView.as_view()),
]
