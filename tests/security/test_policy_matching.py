"""Policy checks compare exactly, and an explicit target is never filled in with the caller's."""

import pytest

from placementsite.core.api import policy
from placementsite.core.api.auth import RequestContext

pytestmark = pytest.mark.django_db


@pytest.fixture
def secure(settings):
    settings.PLACEMENT_POLICY_DEFAULTS = "secure"


def reader_of(project, user="u1"):
    return {"token": f"{user}:{project}", "headers": {"X-Roles": "reader"}}


def test_reader_reads_usages_of_its_own_project(api, secure):
    response = api.get("/usages?project_id=p1", **reader_of("p1"))
    assert response.status == 200


def test_project_id_is_compared_case_sensitively(api, secure):
    response = api.get("/usages?project_id=P1", **reader_of("p1"))
    assert response.status == 403
    assert "placement:usages" in response.error["detail"]


def test_role_names_stay_case_insensitive_as_in_oslo_policy(api, secure):
    response = api.get("/usages?project_id=p1", token="u1:p1", headers={"X-Roles": "READER"})
    assert response.status == 200


def _policy_file(settings, tmp_path, rules):
    path = tmp_path / "policy.yaml"
    path.write_text("".join(f'"{name}": "{check}"\n' for name, check in rules.items()))
    settings.PLACEMENT_POLICY_FILE = str(path)


def test_user_rule_does_not_pass_for_another_projects_usages(api, settings, tmp_path):
    # The usages target holds only project_id (as Placement's): a rule on user_id must not
    # be satisfied by the caller's own user_id filled into it.
    _policy_file(settings, tmp_path, {"placement:usages": "user_id:%(user_id)s"})
    response = api.get("/usages?project_id=other", token="u1:p1", headers={"X-Roles": "reader"})
    assert response.status == 403


def test_rule_without_a_target_checks_the_callers_own_project(api, settings, tmp_path):
    _policy_file(
        settings, tmp_path, {"placement:resource_providers:list": "project_id:%(project_id)s"}
    )
    response = api.get("/resource_providers", token="u1:p1", headers={"X-Roles": "reader"})
    assert response.status == 200


def test_explicit_target_is_used_as_given(secure, policy_file):
    context = RequestContext(user_id="u1", project_id="p1", roles=["reader"])
    assert policy.check("placement:usages", context, {"project_id": "p1"})
    assert not policy.check("placement:usages", context, {"project_id": "P1"})
    # A check string naming a key the target lacks fails instead of reading the caller's.
    policy_file({"placement:resource_providers:list": "user_id:%(user_id)s"})
    rule = "placement:resource_providers:list"
    assert not policy.check(rule, context, {"project_id": "p2"})
    assert policy.check(rule, context, {"user_id": "u1"})
