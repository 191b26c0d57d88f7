"""The one uuid parser: what text names a uuid, in its canonical form.

Two readings. :func:`parse` is lenient like Placement's (oslo's ``is_uuid_like``): any case,
dashes anywhere or none, braces, a ``urn:``/``uuid:`` prefix; it also forgives surrounding
blanks and an upper-case prefix, as this service's query-string checks always have. Query
strings, bodies and most URLs take it. :func:`parse_strict` takes only the canonical dashed
form (any case), for the URLs where Placement looks a provider up by its text as given, so
that anything else names no provider.
"""

import uuid as uuidlib

_PREFIXES = ("urn:", "uuid:")


def parse(value):
    """The canonical uuid (lower case, dashed) that ``value`` names; None when it names none.

    ``value`` is text or a :class:`uuid.UUID`; anything else names none.
    """
    if isinstance(value, uuidlib.UUID):
        return str(value)
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    for prefix in _PREFIXES:
        if text.startswith(prefix):
            text = text[len(prefix) :]
    text = text.strip("{}").replace("-", "")
    if len(text) != 32:
        return None
    try:
        return str(uuidlib.UUID(hex=text))
    except ValueError:
        return None


def is_uuid_like(value):
    """True when :func:`parse` finds a uuid in ``value``."""
    return parse(value) is not None


def parse_strict(value):
    """The canonical uuid when ``value`` is one already, but for case; else None."""
    if not isinstance(value, str):
        return None
    found = parse(value)
    return found if found == value.lower() else None
