"""The rules stay below HTTP: no module of the apps but their edges (``api/``, ``rest/``,
``management/``, ``admin.py``) imports ``placementsite.core.api``, nor an edge of any app (which
would bring the plumbing in through the back door). Services, selectors and rule modules raise
domain errors (placementsite.core.exceptions) and the edges map them. The apps import each other
one way: scheduling -> allocations -> providers -> placementsite.core. ``placementsite`` is two
layers: its bottom package ``core`` imports no app and nothing of the site layer above it, and
the apps import ``placementsite.core``, never the site layer (settings, urls, dashboard,
observability, tasks...), which collects what they contribute. Every check walks the whole syntax
tree: an import inside a function counts as much as one at the top of a module."""

import ast
from pathlib import Path

import pytest
from django.conf import settings

APPS = ("providers", "allocations", "scheduling")
EDGE_PACKAGES = {"api", "rest", "management"}  # management/commands: edges, too
# policies.py: the rules the edges check (declared with the HTTP plumbing's policy engine).
EDGE_MODULES = {"admin.py", "policies.py"}
HTTP_PLUMBING = "placementsite.core.api"

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
        ("from placementsite.core.api.errors import HTTPBadRequest", True),
        ("from placementsite.core.api import microversion", True),
        ("from placementsite.core import api", True),
        ("import placementsite.core.api.validation", True),
        ("from placementsite.core import exceptions, uuids", False),
        ("from placementsite.core.versions import MAX_VERSION", False),
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


# --- two layers in placementsite: core below the apps, the site above them --------------------

CORE = "placementsite/core"


def package_of(path):
    """The dotted package a module (a path relative to the project) lives in."""
    parts = path.with_suffix("").parts
    return ".".join(parts if parts[-1] == "__init__" else parts[:-1])


def imported_modules(source, package=""):
    """Every dotted name the source imports, anywhere in its syntax tree (inside functions too),
    relative imports resolved against ``package``; ``from a import b`` gives ``a.b``."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parents = package.split(".")
                parents = parents[: len(parents) - (node.level - 1)]
                base = ".".join(part for part in [*parents, base] if part)
            yield from (f"{base}.{alias.name}" for alias in node.names)


def is_site_layer(name):
    """``placementsite`` itself or any module of it outside ``placementsite.core``."""
    parts = name.split(".")
    return parts[0] == "placementsite" and (len(parts) == 1 or parts[1] != "core")


def is_an_app(name):
    return name.split(".")[0] in APPS


def offenders_under(folder, check):
    return [
        str(path.relative_to(BASE))
        for path in sorted((BASE / folder).rglob("*.py"))
        if any(
            check(name)
            for name in imported_modules(path.read_text(), package_of(path.relative_to(BASE)))
        )
    ]


def test_the_core_imports_no_app():
    assert offenders_under(CORE, is_an_app) == []


def test_the_core_imports_nothing_of_the_site_layer():
    assert offenders_under(CORE, is_site_layer) == []


@pytest.mark.parametrize("app", APPS)
def test_the_apps_import_the_core_never_the_site_layer(app):
    """Edges, tasks and migrations included: the site collects what an app contributes."""
    assert offenders_under(app, is_site_layer) == []


def test_the_core_walk_covers_its_plumbing():
    walked = {path.relative_to(BASE).as_posix() for path in (BASE / CORE).rglob("*.py")}
    assert {
        "placementsite/core/exceptions.py",
        "placementsite/core/api/errors.py",
        "placementsite/core/api/policy.py",
        "placementsite/core/rest/views.py",
    } <= walked


@pytest.mark.parametrize(
    ("source", "package", "found"),
    [
        ("def f():\n    from allocations.selectors.usage import x", "placementsite.core", True),
        ("import scheduling.candidates", "placementsite.core.api", True),
        ("from providers import capacity", "placementsite.core.rest", True),
        ("from placementsite.core import exceptions", "placementsite.core.api", False),
        ("from ..exceptions import NotFound", "placementsite.core.api", False),
        ("import providersx", "placementsite.core", False),
    ],
)
def test_the_app_check_recognises_every_form_of_import(source, package, found):
    assert any(is_an_app(name) for name in imported_modules(source, package)) is found


@pytest.mark.parametrize(
    ("source", "package", "found"),
    [
        ("from placementsite.observability import metrics", "scheduling.api", True),
        ("def f():\n    from placementsite.tasks import heartbeat", "providers", True),
        ("from placementsite import selectors", "allocations.selectors", True),
        ("import placementsite", "providers", True),
        ("import placementsite.dashboard.units", "providers", True),
        ("from ...observability import metrics", "placementsite.core.api", True),
        ("from .. import settings", "placementsite.core", True),
        ("from placementsite.core import uuids", "providers", False),
        ("from placementsite.core.api.errors import HTTPNotFound", "providers.api", False),
        ("import placementsite.core.exceptions", "scheduling", False),
        ("from ..errors import HTTPForbidden", "placementsite.core.api.x", False),
        ("from . import schema", "placementsite.core.rest", False),
    ],
)
def test_the_site_layer_check_recognises_every_form_of_import(source, package, found):
    assert any(is_site_layer(name) for name in imported_modules(source, package)) is found


# --- run-time seams: what an import statement does not show ---------------------------------
#
# An app reads a lower app's rows through that app's selectors and writes them through its
# services (or, for providers needing allocations, the declared port, providers/
# allocations_port.py). Two ways around that import nothing new: a reverse ORM relation
# declared by an app above (``provider.allocations``), and a manager write on a model
# imported from another app (``Allocation.objects.filter(...).delete()``).

WRITES = {"create", "bulk_create", "get_or_create", "update_or_create", "update", "delete"}
WRITES |= {"bulk_update"}


def reverse_accessors_from_above(app):
    """The accessor names of reverse relations that the apps above ``app`` put on its models."""
    from django.apps import apps as registry

    above = set(APPS[APPS.index(app) + 1 :])
    return {
        relation.get_accessor_name()
        for model in registry.get_app_config(app).get_models()
        for relation in model._meta.related_objects
        if relation.related_model._meta.app_label in above
    }


# Read through a related manager: what follows the accessor (``provider.allocations.exists()``);
# a mapping's methods (items, values, get, update) are left out, so that a named type's field
# of the same name (``holdings.allocations.items()``) is not taken for one.
MANAGER_READS = {"all", "filter", "exclude", "exists", "count", "aggregate", "annotate"}
MANAGER_READS |= {"values_list", "first", "last", "select_related", "prefetch_related"}
MANAGER_READS |= {"order_by", "delete", "iterator", "only", "defer", "in_bulk", "distinct"}


def reverse_accesses(source, accessors):
    """``(line, name)`` of each related manager named like one of ``accessors`` used as one
    (``something.allocations.filter(...)``)."""
    return [
        (node.lineno, node.value.attr)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute)
        and node.attr in MANAGER_READS
        and isinstance(node.value, ast.Attribute)
        and node.value.attr in accessors
    ]


def other_apps_models(source, app):
    """The names a module binds to models of another app (``from allocations.models import
    Allocation``)."""
    return {
        alias.asname or alias.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom)
        and node.level == 0
        and (node.module or "").split(".")[0] in set(APPS) - {app}
        and (node.module or "").endswith(".models")
        for alias in node.names
    }


def foreign_writes(source, app):
    """``(line, model, method)`` of each manager write (``Model.objects....delete()``) on a
    model of another app."""
    models = other_apps_models(source, app)
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr not in WRITES:
            continue
        chain, through_manager = node.func.value, False
        while isinstance(chain, ast.Attribute | ast.Call):
            if isinstance(chain, ast.Attribute) and chain.attr == "objects":
                through_manager = True
            chain = chain.func if isinstance(chain, ast.Call) else chain.value
        if through_manager and isinstance(chain, ast.Name) and chain.id in models:
            found.append((node.lineno, chain.id, node.func.attr))
    return found


@pytest.mark.parametrize("app", APPS[:-1])
def test_no_app_reads_an_app_above_through_a_reverse_relation(app):
    accessors = reverse_accessors_from_above(app)
    offenders = [
        (str(path), line, name)
        for path in rule_modules()
        if path.parts[0] == app
        for line, name in reverse_accesses((BASE / path).read_text(), accessors)
    ]
    assert offenders == []


def test_the_reverse_relations_checked_include_the_allocations_of_a_provider():
    assert "allocations" in reverse_accessors_from_above("providers")
    assert reverse_accesses("if provider.allocations.exists(): pass", {"allocations"}) == [
        (1, "allocations")
    ]
    assert reverse_accesses("rc.allocations.filter(used=1).delete()", {"allocations"}) == [
        (1, "allocations")
    ]
    assert (
        reverse_accesses("for rp, r in holdings.allocations.items(): pass", {"allocations"}) == []
    )


@pytest.mark.parametrize("app", APPS)
def test_no_app_writes_another_apps_models(app):
    offenders = [
        (str(path), *found)
        for path in rule_modules()
        if path.parts[0] == app
        for found in foreign_writes((BASE / path).read_text(), app)
    ]
    assert offenders == []


@pytest.mark.parametrize(
    "source, found",
    [
        (
            "from allocations.models import Allocation\n"
            "Allocation.objects.filter(consumer_id__in=ids).delete()",
            [(2, "Allocation", "delete")],
        ),
        (
            "from providers.models import ComputeNode as Node\n"
            "Node.objects.filter(pk=1).update(disabled=True)",
            [(2, "Node", "update")],
        ),
        ("from ..models import Server\nServer.objects.filter(pk=1).delete()", []),
        ("from allocations.models import Allocation\nAllocation.objects.filter(pk=1)", []),
    ],
)
def test_the_write_check_recognises_a_write_through_another_apps_manager(source, found):
    assert foreign_writes(source, "scheduling") == found


# Services and selectors are the apps' public seams: what they take is named at every call
# (keyword-only), and typed as the domain speaks, never as the wire does: no microversion
# parameter and no import of the microversion plumbing or of the query-string schemas (the
# edges turn a microversion into a domain flag, as ``allow_reparenting`` is one).

SEAM_PACKAGES = {"services", "selectors"}
VERSION_MODULES = {"placementsite.core.versions", "providers.query_params"}
VERSION_PARAMETERS = {"microversion", "version", "want_version"}


def seam_modules():
    for path in rule_modules():
        if SEAM_PACKAGES & set(path.parts[1:-1]):
            yield path


def positional_parameters(source):
    """``(line, function, parameters)`` of each public module-level function that takes
    positional parameters."""
    return [
        (node.lineno, node.name, [arg.arg for arg in node.args.posonlyargs + node.args.args])
        for node in ast.parse(source).body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and not node.name.startswith("_")
        and (node.args.posonlyargs or node.args.args or node.args.vararg)
    ]


def wire_versions(source, package=""):
    """``(line, what)`` of each microversion parameter and each import of the version
    plumbing."""
    tree = ast.parse(source)
    found = [
        (node.lineno, name)
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for module in imported_modules(ast.unparse(node), package)
        for name in sorted(VERSION_MODULES)
        if module == name or module.startswith(name + ".")
    ]
    found += [
        (node.lineno, arg.arg)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for arg in node.args.posonlyargs + node.args.args + node.args.kwonlyargs
        if arg.arg in VERSION_PARAMETERS
    ]
    return found


def test_the_seam_walk_covers_every_app_s_services_and_selectors():
    walked = {str(path) for path in seam_modules()}
    for app in APPS:
        assert any(path.startswith(f"{app}/services/") for path in walked), app
        assert any(path.startswith(f"{app}/selectors/") for path in walked), app
    assert not any("/api/" in path or "/rest/" in path for path in walked)


def test_public_services_and_selectors_take_keyword_arguments_only():
    offenders = [
        (str(path), *found)
        for path in seam_modules()
        for found in positional_parameters((BASE / path).read_text())
    ]
    assert offenders == []


@pytest.mark.parametrize(
    "source, found",
    [
        ("def provider_for_update(uuid):\n    pass", [(1, "provider_for_update", ["uuid"])]),
        ("def f(a, /, *, b):\n    pass", [(1, "f", ["a"])]),
        ("def f(*args):\n    pass", [(1, "f", [])]),
        ("def f(*, uuid, lock=True):\n    pass", []),
        ("def _private(uuid):\n    pass", []),
        ("class A:\n    def m(self, x):\n        pass", []),
    ],
)
def test_the_keyword_only_check_recognises_positional_parameters(source, found):
    assert positional_parameters(source) == found


def test_microversions_stay_at_the_edge():
    offenders = [
        (str(path), *found)
        for path in seam_modules()
        for found in wire_versions((BASE / path).read_text(), package_of(path))
    ]
    assert offenders == []


@pytest.mark.parametrize(
    "source, package, found",
    [
        (
            "from placementsite.core.versions import MAX_VERSION",
            "",
            [(1, "placementsite.core.versions")],
        ),
        ("from placementsite.core import versions", "", [(1, "placementsite.core.versions")]),
        (
            "from ..query_params import schema",
            "providers.services",
            [(1, "providers.query_params")],
        ),
        ("def f(*, microversion):\n    pass", "", [(1, "microversion")]),
        ("def f(*, allow_reparenting):\n    pass", "", []),
    ],
)
def test_the_microversion_check_recognises_versions_and_their_plumbing(source, package, found):
    assert wire_versions(source, package) == found
