"""Template helpers of the dashboard: amounts in human units, sortable column headers and
links to providers and consumers."""

from functools import lru_cache

from django import template
from django.urls import get_script_prefix, reverse
from django.utils.html import format_html

from ..units import NO_LIMIT, human

register = template.Library()


@register.simple_tag(takes_context=True)
def amount(context, value, resource_class):
    """``{% amount inv.used inv.resource_class %}``: the amount in the class's unit.

    The page's ``units`` ({class name: unit}, read once per page by the view) says
    which unit a class counts in.
    """
    return human(value, context.get("units", {}).get(resource_class, ""))


@register.simple_tag(takes_context=True)
def limit(context, value, resource_class):
    """As ``amount``, but Placement's default max_unit reads as "no limit"."""
    if value == NO_LIMIT:
        return "no limit"
    return amount(context, value, resource_class)


@register.simple_tag(takes_context=True)
def sort_header(context, key, label, numeric=False):
    """A column header that sorts the table by ``key`` (server-side, kept in the URL).

    The first click on a numeric column sorts it largest first; a second click flips it.
    """
    request = context["request"]
    current = context.get("sort", "")
    descending_first = numeric
    if current == key:
        target, arrow, state = f"-{key}", " ▲", "ascending"
    elif current == f"-{key}":
        target, arrow, state = key, " ▼", "descending"
    else:
        target, arrow, state = (f"-{key}" if descending_first else key), "", "none"
    query = request.GET.copy()
    query["sort"] = target
    query.pop("page", None)
    return format_html(
        '<a class="sort{}" href="?{}" aria-sort="{}" data-sort="{}">{}{}</a>',
        "" if state == "none" else " sorted",
        query.urlencode(),
        state,
        key,
        label,
        arrow,
    )


_PLACEHOLDER = "00000000-0000-0000-0000-000000000000"


@lru_cache(maxsize=32)
def _around(route, script_prefix):
    """The URL of ``route`` split around its uuid: reversed once, not once per table row (a
    long table links hundreds of providers, and ``{% url %}`` resolves each one anew)."""
    url = reverse(route, args=[_PLACEHOLDER])
    before, _, after = url.partition(_PLACEHOLDER)
    return before, after


def _link(route, uuid):
    before, after = _around(route, get_script_prefix())
    return f"{before}{uuid}{after}"


@register.filter
def provider_url(uuid):
    """``{{ uuid|provider_url }}``: the dashboard page of the provider, as ``{% url
    'dashboard:provider' uuid %}`` gives it."""
    return _link("dashboard:provider", uuid)


@register.filter
def consumer_url(uuid):
    """``{{ uuid|consumer_url }}``: the dashboard page of the consumer."""
    return _link("dashboard:consumer", uuid)


@register.filter
def named(mapping, key):
    """``{{ names|named:uuid }}``: what ``mapping`` holds for ``key`` (a uuid, looked up as
    text), or None."""
    if not mapping:
        return None
    return mapping.get(str(key))
