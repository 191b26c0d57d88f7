"""Forms of the dashboard: the provider filters, the "try a request" request groups, the
Schedule page's server request and a new server group."""

from django import forms
from django.http import QueryDict

from placementsite.core.exceptions import InvalidRequest
from placementsite.core.versions import MAX_VERSION
from providers import request_groups
from providers.selectors.dashboard import TREE_CHILD, TREE_ROOT, ProviderFilters
from scheduling.models import ServerGroup
from scheduling.selectors import dashboard as flavor_reads
from scheduling.services.servers import scheduling_spec

NUMBERED_GROUPS = 3


class ProviderFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=200, label="Name or uuid")
    trait = forms.CharField(required=False, max_length=255)
    aggregate = forms.UUIDField(required=False)
    resource_class = forms.CharField(required=False, max_length=255, label="Resource class")
    tree = forms.ChoiceField(
        required=False,
        choices=[
            ("", "Roots and children"),
            (TREE_ROOT, "Roots only"),
            (TREE_CHILD, "Children only"),
        ],
    )

    def filters(self):
        data = self.cleaned_data if self.is_valid() else {}
        return ProviderFilters(
            q=data.get("q", ""),
            trait=data.get("trait", "").strip(),
            aggregate=data.get("aggregate"),
            resource_class=data.get("resource_class", "").strip(),
            tree=data.get("tree", ""),
        )


class ConsumerFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=255, label="Uuid, project or user")
    project = forms.CharField(required=False, max_length=255)
    user = forms.CharField(required=False, max_length=255)
    consumer_type = forms.ChoiceField(required=False, label="Consumer type")

    def __init__(self, *args, type_names=(), **kwargs):
        super().__init__(*args, **kwargs)
        # A select of the types that exist (an unknown one is a form error, not a 500).
        self.fields["consumer_type"].choices = [("", "any")] + [(n, n) for n in type_names]


def _as_query(key, value):
    query = QueryDict(mutable=True)
    query[key] = value
    return query


def forbidden_as_required(text):
    """``"A, B"`` (or ``"!A,!B"``) -> ``"!A,!B"``: forbidden traits in ``required`` syntax."""
    names = [name.strip().lstrip("!") for name in text.split(",")]
    return ",".join(f"!{name}" for name in names)


class RequestGroupForm(forms.Form):
    """One request group, each field written as the query parameter of the same name in
    ``GET /allocation_candidates`` (``forbidden`` is ``required`` with ``!`` on each trait).

    :meth:`query_items` gives the group as query-string items; the request is parsed by
    :mod:`providers.request_groups`, like the API's.
    """

    resources = forms.CharField(
        required=False,
        max_length=1000,
        widget=forms.TextInput(attrs={"placeholder": "VCPU:2,MEMORY_MB:2048"}),
    )
    required = forms.CharField(
        required=False,
        max_length=2000,
        label="Required traits",
        widget=forms.TextInput(attrs={"placeholder": "HW_CPU_X86_AVX2,!CUSTOM_MAINTENANCE"}),
    )
    forbidden = forms.CharField(
        required=False,
        max_length=2000,
        label="Forbidden traits",
        widget=forms.TextInput(attrs={"placeholder": "CUSTOM_MAINTENANCE"}),
    )
    member_of = forms.CharField(
        required=False,
        max_length=4000,
        label="Member of",
        widget=forms.TextInput(attrs={"placeholder": "in:AGG_UUID,AGG_UUID or !in:AGG_UUID"}),
    )

    def clean_resources(self):
        return self._clean("resources", lambda v: request_groups.parse_resources(v))

    def clean_required(self):
        return self._clean(
            "required",
            lambda v: request_groups.parse_required(_as_query("required", v), MAX_VERSION),
        )

    def clean_forbidden(self):
        return self._clean(
            "forbidden",
            lambda v: request_groups.parse_required(
                _as_query("required", forbidden_as_required(v)), MAX_VERSION
            ),
        )

    def clean_member_of(self):
        return self._clean(
            "member_of",
            lambda v: request_groups.parse_member_of(_as_query("member_of", v), MAX_VERSION),
        )

    def _clean(self, name, parse):
        value = self.cleaned_data[name].strip()
        if value:
            try:
                parse(value)
            except InvalidRequest as exc:
                raise forms.ValidationError(exc.detail) from None
        return value

    def clean(self):
        data = super().clean()
        if data.get("required") and data.get("forbidden"):
            wanted = request_groups.parse_group(
                _as_query("required", data["required"]), MAX_VERSION
            )
            both = set().union(*wanted.required_traits) & {
                name.strip().lstrip("!") for name in data["forbidden"].split(",")
            }
            if both:
                raise forms.ValidationError(
                    f"Traits both required and forbidden: {', '.join(sorted(both))}"
                )
        return data

    def query_items(self, suffix=""):
        """The group as ``[(key, value), ...]`` of a query string, keys suffixed."""
        data = self.cleaned_data
        items = []
        if data["resources"]:
            items.append(("resources" + suffix, data["resources"]))
        if data["required"]:
            items.append(("required" + suffix, data["required"]))
        if data["forbidden"]:
            items.append(("required" + suffix, forbidden_as_required(data["forbidden"])))
        if data["member_of"]:
            items.append(("member_of" + suffix, data["member_of"]))
        return items


def request_query(unnumbered, numbered):
    """The query string (a QueryDict) the valid group forms write together."""
    query = QueryDict(mutable=True)
    forms_by_suffix = [("", unnumbered)] + [
        (str(number), form) for number, form in enumerate(numbered, start=1)
    ]
    for suffix, form in forms_by_suffix:
        for key, value in form.query_items(suffix):
            query.appendlist(key, value)
    return query


def request_groups_of(query):
    """``{suffix: RequestGroup}`` of the groups ``query`` names, as the API parses them."""
    return request_groups.parse_groups(query, MAX_VERSION)


class CandidateOptionsForm(forms.Form):
    """How numbered groups may share providers (Placement's ``group_policy``)."""

    group_policy = forms.ChoiceField(
        choices=[("none", "none: groups may share a provider"), ("isolate", "isolate")],
        required=False,
        initial="none",
        label="Group policy",
    )

    def clean_group_policy(self):
        return self.cleaned_data["group_policy"] or "none"


def request_forms(data=None):
    """The unnumbered group's form and the numbered groups' forms (prefixes g1, g2, ...)."""
    unnumbered = RequestGroupForm(data)
    numbered = [
        RequestGroupForm(data, prefix=f"g{number}") for number in range(1, NUMBERED_GROUPS + 1)
    ]
    for form in numbered:  # the examples are shown once, in the unnumbered row
        for field in form.fields.values():
            field.widget.attrs.pop("placeholder", None)
    return unnumbered, numbered


def _words(text):
    return [word.strip() for word in (text or "").replace(",", " ").split() if word.strip()]


class ScheduleForm(forms.Form):
    flavor = forms.ModelChoiceField(
        queryset=flavor_reads.flavors_to_schedule(), to_field_name="name"
    )
    name = forms.CharField(max_length=200, initial="server")
    count = forms.IntegerField(min_value=1, max_value=100, initial=1)
    project_id = forms.CharField(max_length=255, initial="dashboard")
    user_id = forms.CharField(max_length=255, initial="dashboard")
    availability_zone = forms.CharField(max_length=255, required=False)
    same_host = forms.CharField(required=False, help_text="server ids, comma-separated")
    different_host = forms.CharField(required=False, help_text="server ids, comma-separated")
    target_host = forms.CharField(max_length=255, required=False)
    ignore_hosts = forms.CharField(required=False, help_text="host names, comma-separated")

    def hints(self):
        data = self.cleaned_data
        hints = {
            key: _words(data[key])
            for key in ("same_host", "different_host", "ignore_hosts")
            if data.get(key)
        }
        if data.get("target_host"):
            hints["target_host"] = data["target_host"].strip()
        return hints

    def request(self):
        """What the form asks of the scheduler, as ``scheduling_spec`` and ``servers_create``
        take it."""
        data = self.cleaned_data
        return {
            "flavor": data["flavor"],
            "project_id": data["project_id"],
            "user_id": data["user_id"],
            "count": data["count"],
            "hints": self.hints(),
            "availability_zone": data["availability_zone"],
        }

    def spec(self):
        return scheduling_spec(**self.request())


class ServerGroupForm(forms.Form):
    """A new server group, as ``POST /api/server-groups/`` takes it (the rules' checks are the
    service's: only anti-affinity takes ``max_server_per_host``)."""

    name = forms.CharField(max_length=255)
    policy = forms.ChoiceField(choices=ServerGroup.Policy.choices)
    max_server_per_host = forms.IntegerField(
        required=False, min_value=1, label="Max servers per host", help_text="anti-affinity only"
    )
    project_id = forms.CharField(max_length=255, label="Project")

    def clean(self):
        data = super().clean()
        limit = data.get("max_server_per_host")
        data["rules"] = {} if limit is None else {"max_server_per_host": limit}
        return data
