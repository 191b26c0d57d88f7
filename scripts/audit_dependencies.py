"""Fail on a known vulnerability of an installed dependency (pip-audit over .venv).

Run by scripts/test after installing requirements-test.txt, so it audits every pinned package
and what they pulled in. pip-audit asks a vulnerability service (PyPI's by default) about each
package: a package with a known vulnerability fails the run (exit 1), naming it, its
vulnerabilities and the versions that fix them. When the service cannot be reached for a
package, the package is listed as not audited; that fails the run only with
PLACEMENT_AUDIT_STRICT=1, so that a machine without that service can still test.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

VENV_BIN = Path(__file__).resolve().parent.parent / ".venv" / "bin"


def run_pip_audit():
    result = subprocess.run(
        [
            str(VENV_BIN / "pip-audit"),
            "--format",
            "json",
            "--progress-spinner",
            "off",
            "--skip-editable",
            "--timeout",
            "20",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if not result.stdout.strip():
        sys.stderr.write(result.stderr)
        raise SystemExit(f"audit: pip-audit failed (exit {result.returncode})")
    return json.loads(result.stdout)


def judge(report, strict=False):
    """``(exit status, lines to print)`` for a pip-audit JSON report."""
    vulnerable, skipped, audited = [], [], 0
    for dependency in report.get("dependencies", []):
        if "skip_reason" in dependency:  # pip-audit gives no version here; the reason has it
            skipped.append(f"{dependency['name']}: {dependency['skip_reason']}")
            continue
        name = f"{dependency['name']}=={dependency['version']}"
        audited += 1
        for vuln in dependency.get("vulns", []):
            fixed = ", ".join(vuln.get("fix_versions", [])) or "no fixed version yet"
            vulnerable.append(f"{name}: {vuln['id']} (fixed in {fixed})")
    lines = [f"audit: {audited} packages audited, {len(skipped)} not audited"]
    if skipped and not audited:
        lines.append("audit: WARNING: no package could be audited; nothing was checked")
    if vulnerable:
        lines += ["audit: known vulnerabilities (upgrade the pins):"]
        lines += [f"  {line}" for line in vulnerable]
    if skipped:
        lines += ["audit: not audited (vulnerability service unreachable or unaware):"]
        lines += [f"  {line}" for line in skipped[:10]]
        if len(skipped) > 10:
            lines.append(f"  ... and {len(skipped) - 10} more")
    failed = bool(vulnerable) or (strict and bool(skipped))
    return (1 if failed else 0), lines


def main():
    status, lines = judge(run_pip_audit(), strict=os.environ.get("PLACEMENT_AUDIT_STRICT") == "1")
    print("\n".join(lines), file=sys.stderr)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
