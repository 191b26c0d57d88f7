from django.apps import AppConfig


class AllocationsConfig(AppConfig):
    name = "allocations"
    verbose_name = "Allocations"

    def ready(self):
        # Providers reach allocations through their declared port, never by importing us.
        from providers import allocations_port

        from . import port

        allocations_port.install(port)
