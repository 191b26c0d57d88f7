"""CSV and JSON downloads of the dashboard's lists (``?export=csv`` or ``?export=json``).

A list exports every row its filters match, in its order, not only the page shown;
rows are read page by page (EXPORT_PAGE rows each), so the number of queries grows with
the rows / EXPORT_PAGE, never per row.
"""

import csv
import json
from decimal import Decimal

from django.core.serializers.json import DjangoJSONEncoder
from django.http import HttpResponse
from django.utils import timezone

FORMATS = ("csv", "json")
EXPORT_PAGE = 1000


def requested(request):
    """The export format asked for, or None for the HTML page."""
    fmt = request.GET.get("export", "")
    return fmt if fmt in FORMATS else None


def every_row(fetch_page):
    """Each object of every page ``fetch_page(number, per_page)`` gives, in order."""
    number = 1
    while True:
        page = fetch_page(number, EXPORT_PAGE)
        yield from page.object_list
        if not page.has_next():
            return
        number += 1


def in_batches(rows, size=EXPORT_PAGE):
    """``rows`` as lists of up to ``size`` (to read what goes with them a batch at a time)."""
    batch = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _cell(value):
    """A CSV cell: mappings as ``KEY=VALUE; ...``, lists joined by ``; ``."""
    if value is None:
        return ""
    if isinstance(value, dict):
        return "; ".join(f"{key}={_cell(item)}" for key, item in value.items())
    if isinstance(value, list | tuple):
        return "; ".join(_cell(item) for item in value)
    return str(value)


# A spreadsheet reads a cell starting with one of these as a formula (or, for tab and carriage
# return, strips them and reads what follows): such cells are written with a leading "'".
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _csv_cell(value):
    """A CSV cell no spreadsheet runs: numbers as they are, text starting a formula quoted."""
    if isinstance(value, bool | int | float | Decimal):
        return str(value)
    text = _cell(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def response(fmt, name, columns, rows):
    """The download of ``rows`` (dicts with ``columns`` as keys) as ``fmt``."""
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    if fmt == "json":
        body = json.dumps([{c: row[c] for c in columns} for row in rows], cls=DjangoJSONEncoder)
        answer = HttpResponse(body, content_type="application/json")
    else:
        answer = HttpResponse(content_type="text/csv; charset=utf-8")
        writer = csv.writer(answer)
        writer.writerow([_csv_cell(c) for c in columns])
        for row in rows:
            writer.writerow([_csv_cell(row[c]) for c in columns])
    answer["Content-Disposition"] = f'attachment; filename="placement-{name}-{stamp}.{fmt}"'
    return answer


def usage_map(inventories):
    """{class: {capacity, used, free}} of a row's ClassUsage list."""
    return {
        inv.resource_class: {"capacity": inv.capacity, "used": inv.used, "free": inv.free}
        for inv in inventories
    }
