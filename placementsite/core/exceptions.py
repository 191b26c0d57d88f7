"""Domain errors: what a rule refuses, in Placement's words, with nothing of HTTP in them.

Services, selectors and the rule modules raise these; each edge answers them its own way: the
Placement API and ``/api/`` with an error body whose status follows the kind
(``placementsite.core.api.errors.placement_error_for``), the admin and the dashboard with a form or
message error. ``detail`` is the message a client sees; ``code`` names the kind of refusal
(Placement's error codes, which clients depend on, or this service's own).
"""

# Placement's error codes (placement.errors).
DEFAULT = "placement.undefined_code"
INVENTORY_INUSE = "placement.inventory.inuse"
CONCURRENT_UPDATE = "placement.concurrent_update"
DUPLICATE_NAME = "placement.duplicate_name"
PROVIDER_IN_USE = "placement.resource_provider.inuse"
PROVIDER_CANNOT_DELETE_PARENT = "placement.resource_provider.cannot_delete_parent"
RESOURCE_PROVIDER_NOT_FOUND = "placement.resource_provider.not_found"
ILLEGAL_DUPLICATE_QUERYPARAM = "placement.query.duplicate_key"
QUERYPARAM_BAD_VALUE = "placement.query.bad_value"
QUERYPARAM_MISSING_VALUE = "placement.query.missing_value"


class DomainError(Exception):
    """A refusal. Raise one of its kinds below, which say how the edges should answer."""

    code = DEFAULT

    def __init__(self, detail="", code=None):
        super().__init__(detail)
        self.detail = detail
        if code is not None:
            self.code = code


class InvalidRequest(DomainError):
    """The request is malformed or asks what a rule does not allow."""


class NotFound(DomainError):
    """What the request names does not exist."""


class Conflict(DomainError):
    """The request cannot be done in the state things are in."""


class Unavailable(DomainError):
    """The service cannot answer this request now (a part of it failed or ran out of time);
    nothing was changed."""


class ConcurrentUpdate(Conflict):
    """Changed by someone else since the caller read it (a generation moved): read again and
    retry."""

    code = CONCURRENT_UPDATE


#: Placement's words when a write lost a race inside its transaction (not a stale generation
#: the client sent): inventory and allocation writes end their detail with it.
CONCURRENTLY_UPDATED = "Another thread concurrently updated the data. Please retry your update"


class InventoryInUse(Conflict):
    """Allocations exist against inventory a write would remove."""

    code = INVENTORY_INUSE


class DuplicateName(Conflict):
    """The name (or uuid) is taken."""

    code = DUPLICATE_NAME


class ProviderInUse(Conflict):
    """A provider that has allocations cannot be deleted."""

    code = PROVIDER_IN_USE


class CannotDeleteParent(Conflict):
    """A provider that has child providers cannot be deleted."""

    code = PROVIDER_CANNOT_DELETE_PARENT
