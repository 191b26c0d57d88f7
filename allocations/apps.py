from django.apps import AppConfig


class AllocationsConfig(AppConfig):
    name = "allocations"
    verbose_name = "Allocations"

    def ready(self):
        # Providers read usage through providers.usage without importing this app.
        from providers import usage

        from .selectors import usage as usage_selector

        usage.install(usage_selector)
