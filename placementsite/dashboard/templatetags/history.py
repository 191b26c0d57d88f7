"""``{% host_history provider %}`` and ``{% cloud_history %}``: capacity and usage over time.

Each class is drawn as an inline SVG (capacity and used as two lines, no script), from
the usage samples the ``usage history`` beat task records.
"""

from django import template

from providers.selectors.dashboard import class_units
from providers.selectors.history import history_provider_ids, recent_changes, usage_series

from ..units import human

register = template.Library()
WIDTH, HEIGHT = 560, 120


def _points(times, values, top, start, span):
    points = []
    for when, value in zip(times, values, strict=True):
        # One sample (no span): in the middle, drawn as a dot since a line needs two.
        x = (when - start).total_seconds() / span * WIDTH if span else WIDTH / 2
        y = HEIGHT - (value / top * HEIGHT if top else 0)
        points.append((round(x, 1), round(y, 1)))
    return points


def _as_svg(points):
    return " ".join(f"{x},{y}" for x, y in points)


def charts(series, units):
    """One chart per class (``series``: ``{class: [(sampled_at, capacity, used)]}``): SVG
    polylines (dots for a single sample) and the latest figures in the class's unit, with the
    usage's own peak."""
    drawn = []
    for name, samples in sorted(series.items()):
        times = [sampled_at for sampled_at, _capacity, _used in samples]
        capacity_values = [capacity for _sampled_at, capacity, _used in samples]
        used_values = [used for _sampled_at, _capacity, used in samples]
        start, end = times[0], times[-1]
        span = (end - start).total_seconds()
        top = max(max(capacity_values), max(used_values)) or 1
        unit = units.get(name, "")
        capacity_points = _points(times, capacity_values, top, start, span)
        used_points = _points(times, used_values, top, start, span)
        drawn.append(
            {
                "resource_class": name,
                "capacity_points": _as_svg(capacity_points),
                "used_points": _as_svg(used_points),
                # A line needs two samples: one is shown as dots (x, y of each).
                "single": capacity_points[0] + used_points[0] if len(samples) == 1 else None,
                "capacity": human(capacity_values[-1], unit),
                "used": human(used_values[-1], unit),
                "peak_used": human(max(used_values), unit),
                "start": start,
                "end": end,
                "samples": len(samples),
            }
        )
    return drawn


def _units(context):
    """The page's ``units`` ({class: unit}, read once by the view) or a read of them."""
    units = context.get("units")
    return units if units is not None else class_units()


@register.inclusion_tag("dashboard/_history_charts.html", takes_context=True)
def host_history(context, provider, tree=None, days=7):
    """A provider's capacity and usage over ``days`` (a host's: its whole ``tree``, given as
    the page's tree nodes when it has them), and the last changes syncs made."""
    if tree and provider.root_id == provider.id:
        provider_ids = [node.id for node in tree]
    else:
        provider_ids = history_provider_ids(provider=provider)
    return {
        "title": "History" + (" of this host" if provider.root_id == provider.id else ""),
        "charts": charts(usage_series(provider_ids=provider_ids, days=days), _units(context)),
        "changes": recent_changes(provider_ids=provider_ids),
        "show_changes": True,
        "days": days,
        "width": WIDTH,
        "height": HEIGHT,
    }


@register.inclusion_tag("dashboard/_history_charts.html", takes_context=True)
def cloud_history(context, days=7):
    """The whole cloud's capacity and usage per class over ``days``."""
    return {
        "title": "Cloud capacity and usage over time",
        "charts": charts(usage_series(days=days), _units(context)),
        "show_changes": False,
        "days": days,
        "width": WIDTH,
        "height": HEIGHT,
    }
