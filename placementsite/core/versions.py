"""The microversions this service implements, as plain ``(major, minor)`` tuples.

Neutral, so that both sides read one range: the HTTP layer negotiates a request's version
within it (``placementsite.core.api.microversion``), and the rules that speak Placement's request
language where no client chose a version (flavor extra specs) read it at the newest.
"""

MIN_VERSION = (1, 0)
MAX_VERSION = (1, 39)
