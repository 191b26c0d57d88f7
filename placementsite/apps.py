from django.apps import AppConfig
from django.db.models.signals import post_migrate


class PlacementSiteConfig(AppConfig):
    name = "placementsite"
    verbose_name = "Placement service"

    def ready(self):
        from .core.api import policy
        from .core.api.configuration import check_configuration
        from .policies import collected
        from .tasks import sync_beat_schedule_after_migrate

        # The apps' policy rules, collected here and handed to the engine in core.
        policy.register_rules(collected())
        check_configuration()

        post_migrate.connect(
            sync_beat_schedule_after_migrate, sender=self, dispatch_uid="sync_beat_schedule"
        )
