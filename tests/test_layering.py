"""The rules stay below HTTP: no module of the apps but their edges (``api/``, ``rest/``,
``management/``, ``admin.py``) imports ``placementsite.api``, nor an edge of any app (which would bring the
plumbing in through the back door). Services, selectors and rule modules raise domain errors
(placementsite.exceptions) and the edges map them. And the apps import each other one way:
scheduling -> allocations -> providers."""

import ast
from pathlib import Path

import pytest
from django.conf import settings

APPS = ("providers", "allocations", "scheduling")
EDGE_PACKAGES = {"api", "rest", "management"}  # management/commands: edges, too
# policies.py: the rules the edges check (declared with the HTTP plumbing's policy engine).
EDGE_MODULES = {"admin.py", "policies.py"}
HTTP_PLUMBING = "placementsite.api"

BASE = Path(settings.BASE_DIR)


def rule_modules():
    """Every module of the apps that is not an HTTP edge, as a path relative to the project."""
    for app in APPS:
        for path in sorted((BASE / app).rglob("*.py")):
            parts = path.relative_to(BASE).parts
            if EDGE_PACKAGES & set(parts[1:-1]) or parts[-1] in EDGE_MODULES:
                continue
            yield path.relative_to(BASE)


def imported_names(source):
    """The dotted names a module's source imports (``from a import b`` gives ``a`` and
    ``a.b``); relative imports stay inside their app and are left out."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def imports_http_plumbing(source):
    return any(
        name == HTTP_PLUMBING or name.startswith(HTTP_PLUMBING + ".")
        for name in imported_names(source)
    )


def imports_an_edge(source):
    """Whether the source imports an app's ``api``/``rest`` package, absolutely or relatively."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level > 0:
            names = [node.module or ""] + [
                f"{node.module}.{a.name}" if node.module else a.name for a in node.names
            ]
            if any(name.split(".")[0] in EDGE_PACKAGES for name in names):
                return True
    return any(
        name.split(".")[:2] in ([app, edge] for app in APPS for edge in EDGE_PACKAGES)
        for name in imported_names(source)
    )


def imports_policies(source):
    """Whether the source imports an app's policy rules, absolutely or relatively."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level > 0:
            names = [node.module or ""] + [
                f"{node.module}.{a.name}" if node.module else a.name for a in node.names
            ]
            if any(name.split(".")[0] == "policies" for name in names):
                return True
    return any(
        name.split(".")[:2] in ([app, "policies"] for app in APPS)
        for name in imported_names(source)
    )


def test_no_service_selector_or_rule_module_checks_policy():
    """Who may do what is decided at the edges: the rules never import the policy rules."""
    offenders = [
        str(path) for path in rule_modules() if imports_policies((BASE / path).read_text())
    ]
    assert offenders == []


def test_no_service_selector_or_rule_module_imports_the_http_plumbing():
    offenders = [
        str(path) for path in rule_modules() if imports_http_plumbing((BASE / path).read_text())
    ]
    assert offenders == []


def test_no_service_selector_or_rule_module_imports_an_edge():
    offenders = [str(path) for path in rule_modules() if imports_an_edge((BASE / path).read_text())]
    assert offenders == []


@pytest.mark.parametrize(
    "source, found",
    [
        ("from scheduling.api.views import query_schema", True),
        ("from providers.api import query_params", True),
        ("import allocations.rest.views", True),
        ("from ..api import views", True),
        ("from . import api", True),
        ("from providers import query_params", False),
        ("from ..selectors import usage", False),
        ("from providers.apis import x", False),
    ],
)
def test_the_edge_check_recognises_every_form_of_import(source, found):
    assert imports_an_edge(source) is found


def test_the_walk_covers_the_rules_and_skips_the_edges():
    walked = {path.as_posix() for path in rule_modules()}
    assert {
        "providers/services/inventories.py",
        "providers/selectors/traits.py",
        "providers/request_groups.py",
        "allocations/services/allocations.py",
        "scheduling/extra_specs.py",
        "scheduling/selectors/scheduler.py",
    } <= walked
    assert not [
        p
        for p in walked
        if "/api/" in p or "/rest/" in p or "/management/" in p or p.endswith("/admin.py")
    ]


@pytest.mark.parametrize(
    "source, found",
    [
        ("from placementsite.api.errors import BadRequest", True),
        ("from placementsite.api import microversion", True),
        ("from placementsite import api", True),
        ("import placementsite.api.validation", True),
        ("from placementsite import exceptions, uuids", False),
        ("from placementsite.versions import MAX_VERSION", False),
        ("from .api import views", False),
    ],
)
def test_the_check_recognises_every_form_of_import(source, found):
    assert imports_http_plumbing(source) is found


# --- one way between the apps: scheduling -> allocations -> providers ------------------------

# What each app may not import (shared/ARCHITECTURE.md): allocations consume providers'
# inventories and the scheduler uses both, never the other way round.
NOT_BELOW = {"providers": ("allocations", "scheduling"), "allocations": ("scheduling",)}


def imports_an_app_above(source, above):
    return any(name.split(".")[0] in above for name in imported_names(source) if name)


@pytest.mark.parametrize("app", sorted(NOT_BELOW))
def test_the_apps_import_each_other_one_way(app):
    above = NOT_BELOW[app]
    offenders = [
        str(path.relative_to(BASE))
        for path in sorted((BASE / app).rglob("*.py"))
        if imports_an_app_above(path.read_text(), above)
    ]
    assert offenders == [], f"{app} imports {' or '.join(above)}: {offenders}"


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("from allocations.models import Allocation", True),
        ("import scheduling.candidates", True),
        ("def f():\n    from allocations.selectors import usage", True),
        ("from providers.models import Inventory", False),
        ("from .models import Inventory", False),
    ],
)
def test_the_one_way_check_recognises_imports_of_an_app_above(source, found):
    assert imports_an_app_above(source, ("allocations", "scheduling")) is found
