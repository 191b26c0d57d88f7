from django.apps import AppConfig


class SchedulingConfig(AppConfig):
    name = "scheduling"
    verbose_name = "Scheduling"

    def ready(self):
        # An unknown filter or weigher name stops startup, listing the available ones.
        from .plugins import check_configuration

        check_configuration()
