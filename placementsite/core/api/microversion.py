"""Microversions: ``OpenStack-API-Version: placement X.Y``.

A request carries a :class:`Version`; views ask ``request.microversion >= "1.14"``
or decorate a handler with :func:`since` to say that it exists only from a
given microversion on.
"""

import functools
import re

from placementsite.core.versions import MAX_VERSION, MIN_VERSION

from .errors import HTTPNotAcceptable, PlacementError

SERVICE_TYPE = "placement"
HEADER = "OpenStack-API-Version"

_VERSION_RE = re.compile(r"^(\d+)\.(\d+)$")


class Version(tuple):
    """A (major, minor) pair that compares against tuples or "X.Y" strings."""

    def __new__(cls, major, minor):
        return super().__new__(cls, (int(major), int(minor)))

    @classmethod
    def parse(cls, text):
        match = _VERSION_RE.match(text.strip())
        if not match:
            raise ValueError(text)
        return cls(match.group(1), match.group(2))

    @staticmethod
    def _coerce(other):
        if isinstance(other, str):
            return Version.parse(other)
        return tuple(other)

    def __ge__(self, other):
        return tuple(self) >= self._coerce(other)

    def __gt__(self, other):
        return tuple(self) > self._coerce(other)

    def __le__(self, other):
        return tuple(self) <= self._coerce(other)

    def __lt__(self, other):
        return tuple(self) < self._coerce(other)

    def __eq__(self, other):
        return tuple(self) == self._coerce(other)

    def __ne__(self, other):
        return not self == other

    __hash__ = tuple.__hash__

    def matches(self, min_version, max_version=None):
        if self < min_version:
            return False
        return max_version is None or self <= max_version

    def __str__(self):
        return f"{self[0]}.{self[1]}"

    def __repr__(self):
        return f"Version({self})"


MINIMUM = Version(*MIN_VERSION)
MAXIMUM = Version(*MAX_VERSION)


class MalformedVersion(PlacementError):
    status = 400


def from_headers(header_value):
    """The microversion a request asks for; the minimum when it asks none."""
    if not header_value:
        return MINIMUM
    wanted = None
    for item in header_value.split(","):
        parts = item.strip().split(None, 1)
        if len(parts) == 2 and parts[0].lower() == SERVICE_TYPE:
            wanted = parts[1].strip()
    if wanted is None:
        return MINIMUM
    if wanted.lower() == "latest":
        return MAXIMUM
    try:
        version = Version.parse(wanted)
    except ValueError:
        raise MalformedVersion(f"invalid version string: {wanted}") from None
    if not MINIMUM <= version <= MAXIMUM:
        raise HTTPNotAcceptable(
            f"Unacceptable version header: {wanted}",
        )
    return version


def since(min_version, max_version=None, status=404):
    """Declare that a view method exists only for a range of microversions.

    Outside the range Placement answers 404 (or 405 where it chose that,
    e.g. ``DELETE .../inventories`` before 1.5).
    """

    def decorator(method):
        @functools.wraps(method)
        def wrapper(self, request, *args, **kwargs):
            if not request.microversion.matches(min_version, max_version):
                from .errors import HTTPMethodNotAllowed, HTTPNotFound

                if status == 405:
                    raise HTTPMethodNotAllowed("Method not allowed at this microversion.")
                raise HTTPNotFound("The resource could not be found.")
            return method(self, request, *args, **kwargs)

        wrapper.min_version = min_version
        wrapper.max_version = max_version
        return wrapper

    return decorator
