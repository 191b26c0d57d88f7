"""Forms of the dashboard: the provider filters and the "try a request" request groups."""

import re
import uuid as uuidlib

from django import forms

from providers.selectors.dashboard import TREE_CHILD, TREE_ROOT, ProviderFilters
from providers.selectors.resource_providers import RequestGroup

NAME_RE = re.compile(r"^[A-Z0-9_]+$")
MAX_AMOUNT = 2147483647
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
    consumer_type = forms.CharField(required=False, max_length=255, label="Consumer type")


def parse_resources(text):
    """``"VCPU:2, MEMORY_MB:2048"`` -> ``{"VCPU": 2, "MEMORY_MB": 2048}``."""
    resources = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, sep, amount = item.partition(":")
        name = name.strip().upper()
        amount = amount.strip()
        if not sep or not NAME_RE.match(name):
            raise forms.ValidationError(
                f'"{item}" is not CLASS:AMOUNT (for example VCPU:2,MEMORY_MB:2048).'
            )
        if not amount.isdigit() or not 0 < int(amount) <= MAX_AMOUNT:
            raise forms.ValidationError(f"The amount of {name} must be a positive integer.")
        if name in resources:
            raise forms.ValidationError(f"{name} is given twice.")
        resources[name] = int(amount)
    return resources


def parse_traits(text):
    """``"A, !B"`` -> ``({"A"}, {"B"})``: required and forbidden names."""
    required, forbidden = set(), set()
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        target = forbidden if item.startswith("!") else required
        name = item.lstrip("!").strip().upper()
        if not NAME_RE.match(name):
            raise forms.ValidationError(f'"{item}" is not a trait name.')
        target.add(name)
    return required, forbidden


def parse_member_of(text):
    """``"in:A,B; C; !D"`` -> ``((frozenset{A, B}, frozenset{C}), frozenset{D})``.

    Each ``;``-separated clause is one ``member_of``: ``uuid``, ``in:uuid,uuid``
    (any of), or the same after ``!`` (none of).
    """
    member_of, forbidden = [], set()
    for clause in (part.strip() for part in text.split(";")):
        if not clause:
            continue
        negate = clause.startswith("!")
        body = clause.lstrip("!").strip()
        if body.startswith("in:"):
            body = body[3:]
        uuids = set()
        for item in (part.strip() for part in body.split(",")):
            if not item:
                continue
            try:
                uuids.add(str(uuidlib.UUID(item)))
            except ValueError:
                raise forms.ValidationError(f'"{item}" is not an aggregate uuid.') from None
        if not uuids:
            raise forms.ValidationError(f'"{clause}" names no aggregate.')
        if negate:
            forbidden |= uuids
        else:
            member_of.append(frozenset(uuids))
    return tuple(member_of), frozenset(forbidden)


class RequestGroupForm(forms.Form):
    """One request group: what it asks for, in Placement's query syntax."""

    resources = forms.CharField(
        required=False,
        max_length=1000,
        widget=forms.TextInput(attrs={"placeholder": "VCPU:2,MEMORY_MB:2048"}),
    )
    required = forms.CharField(
        required=False,
        max_length=2000,
        label="Required traits",
        widget=forms.TextInput(attrs={"placeholder": "HW_CPU_X86_AVX2,CUSTOM_GOLD"}),
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
        widget=forms.TextInput(attrs={"placeholder": "in:AGG_UUID,AGG_UUID; !AGG_UUID"}),
    )

    def clean_resources(self):
        return parse_resources(self.cleaned_data["resources"])

    def clean_required(self):
        return parse_traits(self.cleaned_data["required"])

    def clean_forbidden(self):
        required, forbidden = parse_traits(self.cleaned_data["forbidden"])
        return required | forbidden

    def clean_member_of(self):
        return parse_member_of(self.cleaned_data["member_of"])

    def clean(self):
        data = super().clean()
        if "required" in data and "forbidden" in data:
            required, also_forbidden = data["required"]
            forbidden = data["forbidden"] | also_forbidden
            both = required & forbidden
            if both:
                raise forms.ValidationError(
                    f"Traits both required and forbidden: {', '.join(sorted(both))}"
                )
        return data

    def request_group(self):
        """The group as the provider filter engine takes it (each required trait on its own)."""
        data = self.cleaned_data
        required, also_forbidden = data["required"]
        member_of, forbidden_aggregates = data["member_of"]
        return RequestGroup(
            resources=data["resources"],
            required_traits=tuple(frozenset({name}) for name in sorted(required)),
            forbidden_traits=frozenset(data["forbidden"] | also_forbidden),
            member_of=member_of,
            forbidden_aggregates=forbidden_aggregates,
        )


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
