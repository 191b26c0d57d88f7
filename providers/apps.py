from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ProvidersConfig(AppConfig):
    name = "providers"
    verbose_name = "Resource providers"

    def ready(self):
        from django.core.exceptions import ImproperlyConfigured

        from .plugins import PluginLoadError, configured_plugins
        from .standards import sync_standard_names

        # An unknown plugin name stops every process at startup, listing the available ones.
        try:
            configured_plugins()
        except PluginLoadError as exc:
            raise ImproperlyConfigured(str(exc)) from None

        post_migrate.connect(sync_standard_names, sender=self, dispatch_uid="sync_standard_names")
