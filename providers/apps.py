from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ProvidersConfig(AppConfig):
    name = "providers"
    verbose_name = "Resource providers"

    def ready(self):
        from .standards import sync_standard_names

        post_migrate.connect(sync_standard_names, sender=self, dispatch_uid="sync_standard_names")
