from django.apps import AppConfig


class PlacementSiteConfig(AppConfig):
    name = "placementsite"
    verbose_name = "Placement service"
