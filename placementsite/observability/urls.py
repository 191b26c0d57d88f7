from django.urls import path

from . import views

urlpatterns = [
    path("healthcheck", views.healthcheck, name="healthcheck"),
    path("metrics", views.metrics_view, name="metrics"),
]
