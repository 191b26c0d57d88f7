from django.apps import AppConfig


class SchedulingConfig(AppConfig):
    name = "scheduling"
    verbose_name = "Scheduling"

    def ready(self):
        # Providers read aggregate names (a pool's members) through their declared seam.
        from providers import aggregate_names

        from .selectors import aggregates

        aggregate_names.install(aggregates)
        # An unknown filter or weigher name stops startup, listing the available ones.
        from .plugins import check_configuration

        check_configuration()
        # So does an unknown PLACEMENT_MIGRATION_EXPIRED_ACTION.
        from .services.cleanup import expired_action

        expired_action()
