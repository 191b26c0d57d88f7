"""Amounts of a resource class in human units: 6,356,992 MB of memory is "6.06 TiB".

The unit of each class is ``ResourceClass.unit`` (seeded for the standard classes, editable in
the admin; a page reads them with ``providers.selectors.dashboard.class_units``). This module
only knows how a unit scales: memory counted in MB is shown in binary multiples (as Nova sizes
memory), disk counted in GB in decimal ones, as the issue asked. Any other unit is a count of
things (vCPU, device, VF...) named by the class beside it, so it is shown as a plain number.
"""

from django.utils.formats import number_format

# unit -> (base factor, the unit's own label, larger labels in order)
SCALES = {
    "MB": (1024, "MiB", ("GiB", "TiB", "PiB")),
    "GB": (1000, "GB", ("TB", "PB")),
    "kbit/s": (1000, "kbit/s", ("Mbit/s", "Gbit/s", "Tbit/s")),
    "kpps": (1000, "kpps", ("Mpps", "Gpps")),
}
# Placement's default max_unit: "no limit" to a reader.
NO_LIMIT = 2147483647


def _plain(amount):
    return number_format(amount, decimal_pos=0, use_l10n=True, force_grouping=True)


def human(amount, unit=""):
    """``amount`` (a count of ``unit``) as text: scaled for MB and GB, grouped otherwise."""
    if amount is None:
        return "—"
    scale = SCALES.get(unit)
    if scale is None:
        return _plain(amount)
    factor, own_label, larger = scale
    value, sign, label = abs(amount), "-" if amount < 0 else "", own_label
    for bigger in larger:
        if value < factor:
            break
        value, label = value / factor, bigger
    if label == own_label or value >= 100:
        shown = number_format(round(value), decimal_pos=0, force_grouping=True)
    else:
        # Three significant digits: 6.06 TiB, 12.5 GiB.
        decimals = 2 if value < 10 else 1
        shown = number_format(round(value, decimals), decimal_pos=decimals)
        shown = shown.rstrip("0").rstrip(".") if "." in shown else shown
    return f"{sign}{shown} {label}"
