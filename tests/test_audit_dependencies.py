"""scripts/audit_dependencies.py: a known vulnerability fails the run, an unaudited package
only under PLACEMENT_AUDIT_STRICT=1."""

import importlib.util
from pathlib import Path

from django.conf import settings

_spec = importlib.util.spec_from_file_location(
    "audit_dependencies", Path(settings.BASE_DIR) / "scripts" / "audit_dependencies.py"
)
audit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(audit)

CLEAN = {"name": "django", "version": "5.2.19", "vulns": []}
VULNERABLE = {
    "name": "django",
    "version": "4.2.0",
    "vulns": [{"id": "PYSEC-2023-61", "fix_versions": ["4.2.1"], "aliases": [], "description": ""}],
}
SKIPPED = {"name": "kombu", "skip_reason": "Dependency not found on PyPI: kombu (5.7.0)"}


def test_a_known_vulnerability_fails_and_names_the_fix():
    status, lines = audit.judge({"dependencies": [CLEAN, VULNERABLE]})
    assert status == 1
    assert "  django==4.2.0: PYSEC-2023-61 (fixed in 4.2.1)" in lines


def test_clean_report_passes():
    status, lines = audit.judge({"dependencies": [CLEAN]})
    assert status == 0
    assert lines == ["audit: 1 packages audited, 0 not audited"]


def test_unaudited_packages_are_reported_and_fail_only_when_strict():
    report = {"dependencies": [CLEAN, SKIPPED]}
    status, lines = audit.judge(report)
    assert status == 0
    assert "  kombu: Dependency not found on PyPI: kombu (5.7.0)" in lines
    assert audit.judge(report, strict=True)[0] == 1


def test_nothing_audited_says_so():
    _status, lines = audit.judge({"dependencies": [SKIPPED]})
    assert "audit: WARNING: no package could be audited; nothing was checked" in lines


def test_a_vulnerability_fails_even_when_others_were_not_audited():
    assert audit.judge({"dependencies": [SKIPPED, VULNERABLE]})[0] == 1
