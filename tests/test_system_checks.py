"""Django's system checks pass: ``migrate`` and ``collectstatic`` refuse to run otherwise."""

from django.core.management import call_command


def test_system_checks_pass():
    # Raises SystemCheckError on any error-level issue (e.g. an admin misconfiguration).
    call_command("check", fail_level="ERROR")


def test_models_and_migrations_agree(db):
    call_command("makemigrations", check=True, dry_run=True, verbosity=0)
