# A relation without a column (ForeignObject): the model state only. No database operation at
# all (SQLite's schema editor would remake the table for it, and fails on a ForeignObject).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("allocations", "0003_provider_usage"),
        ("providers", "0007_merge_20261125_0419"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddField(
                    model_name="providerusage",
                    name="inventory",
                    field=models.ForeignObject(
                        default=None,
                        from_fields=["resource_provider", "resource_class"],
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="usage_row",
                        to="providers.inventory",
                        to_fields=["resource_provider", "resource_class"],
                    ),
                    preserve_default=False,
                )
            ]
        )
    ]
