"""URLs of the scheduling app's Placement endpoints."""

from django.urls import path

from . import views

urlpatterns = [
    path("allocation_candidates", views.AllocationCandidatesView.as_view()),
]
