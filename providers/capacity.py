"""The capacity model: the one place that knows how much an inventory can give.

Capacity is ``(total - reserved) * allocation_ratio`` (truncated to an
integer, as Placement does). A single request for ``amount`` units must
also respect ``min_unit``, ``max_unit`` and ``step_size``. A write that does not
raise the usage (the same amounts moving from one consumer to another, or
shrinking) is never refused for capacity, as Placement allows it: an inventory
lowered below its usage can still be drained. The API, the
admin, the dashboard's "why not" explanation and the candidates engine all
ask this module; none of them re-implements the rules.
"""

from dataclasses import dataclass, fields

from django.db.models import (
    BigIntegerField,
    ExpressionWrapper,
    F,
    FloatField,
    Func,
    Q,
    Value,
)
from django.db.models.functions import Cast, Coalesce, Mod, NullIf
from django.db.models.lookups import Exact, GreaterThanOrEqual, LessThanOrEqual

# Reasons a request does not fit, named for the rule that refuses it.
BELOW_MIN_UNIT = "min_unit"
ABOVE_MAX_UNIT = "max_unit"
NOT_A_STEP = "step_size"
EXCEEDS_CAPACITY = "capacity"


@dataclass(frozen=True)
class Shortfall:
    """Why ``amount`` units cannot be had, and by how many units it misses."""

    rule: str
    amount: int
    limit: int
    units: int

    def describe(self, resource_class=""):
        rc = f" {resource_class}" if resource_class else ""
        if self.rule == BELOW_MIN_UNIT:
            return f"request of {self.amount}{rc} is below min_unit {self.limit}"
        if self.rule == ABOVE_MAX_UNIT:
            return f"request of {self.amount}{rc} exceeds max_unit {self.limit}"
        if self.rule == NOT_A_STEP:
            return f"request of {self.amount}{rc} is not a multiple of step_size {self.limit}"
        return f"short of{rc} by {self.units} (only {self.limit} free)"


class CapacityExceeded(Exception):
    """Consuming beyond what an inventory can give."""

    def __init__(self, shortfalls):
        self.shortfalls = shortfalls
        super().__init__("; ".join(s.describe() for s in shortfalls))

    @property
    def violates_constraints(self):
        """True when a min/max/step rule refused, rather than plain capacity."""
        return any(s.rule != EXCEEDS_CAPACITY for s in self.shortfalls)


def usable_units(total, reserved, allocation_ratio):
    """How many units an inventory may give in all: :attr:`Capacity.usable` without building
    a Capacity (for hot loops over thousands of inventory rows)."""
    return int((total - reserved) * allocation_ratio)


def utilisation(used, usable):
    """Percentage of ``usable`` that ``used`` takes (over 100 when over capacity):
    :meth:`Capacity.utilisation` for a usable amount already known, or summed over inventories."""
    if usable <= 0:
        return 100.0 if used > 0 else 0.0
    return used * 100.0 / usable


@dataclass(frozen=True)
class Capacity:
    total: int
    reserved: int = 0
    min_unit: int = 1
    max_unit: int = 2147483647
    step_size: int = 1
    allocation_ratio: float = 1.0

    @property
    def usable(self):
        """How many units may be allocated in all."""
        return usable_units(self.total, self.reserved, self.allocation_ratio)

    def free(self, used=0):
        return self.usable - used

    def utilisation(self, used=0):
        """How full ``used`` makes the inventory, in percent of :attr:`usable`."""
        return utilisation(used, self.usable)

    def shortfalls(self, amount, used=0):
        """Every rule that refuses a request of ``amount`` on top of ``used``."""
        found = []
        if amount < self.min_unit:
            found.append(Shortfall(BELOW_MIN_UNIT, amount, self.min_unit, self.min_unit - amount))
        if amount > self.max_unit:
            found.append(Shortfall(ABOVE_MAX_UNIT, amount, self.max_unit, amount - self.max_unit))
        if self.step_size and amount % self.step_size:
            found.append(Shortfall(NOT_A_STEP, amount, self.step_size, amount % self.step_size))
        free = self.free(used)
        if amount > free:
            found.append(Shortfall(EXCEEDS_CAPACITY, amount, max(free, 0), amount - free))
        return found

    def can_provide(self, amount, used=0):
        return not self.shortfalls(amount, used)

    def consume(self, amount, used=0, usage_before=None):
        """The new usage after taking ``amount``; raises CapacityExceeded if it does not fit.

        ``usage_before``: the usage before the write this is part of (which may have freed
        some first). When the write leaves the usage at or below it, capacity does not
        refuse; ``min_unit``, ``max_unit`` and ``step_size`` still do.
        """
        found = self.shortfalls(amount, used)
        if usage_before is not None and used + amount <= usage_before:
            found = [s for s in found if s.rule != EXCEEDS_CAPACITY]
        if found:
            raise CapacityExceeded(found)
        return used + amount


# The inventory columns a Capacity is made of, in constructor order: ``Capacity(*row)`` builds
# one from a row selected with ``values_list(*CAPACITY_FIELDS)``.
CAPACITY_FIELDS = tuple(f.name for f in fields(Capacity))


# --- the same rules as SQL ---------------------------------------------------
#
# The provider filters and the candidates engine ask the database which
# inventories can take an amount, for thousands of providers at once. These
# builders state the rules above as ORM expressions over the Inventory fields,
# so that SQL and Python share one definition (tests/providers/test_capacity_sql.py
# checks that they agree). ``prefix`` reaches the fields through a relation,
# e.g. ``prefix="inventories__"`` from a ResourceProvider queryset.


class _TruncToInteger(Func):
    """Truncate toward zero, as Python's ``int()`` does (never round)."""

    function = "TRUNC"
    output_field = FloatField()

    def as_sqlite(self, compiler, connection, **extra_context):
        return self.as_sql(
            compiler,
            connection,
            function="",
            template="CAST(%(expressions)s AS INTEGER)",
            **extra_context,
        )


def _field(prefix, name):
    return F(f"{prefix}{name}")


def usable_expression(prefix=""):
    """SQL for :attr:`Capacity.usable`: ``int((total - reserved) * allocation_ratio)``."""
    raw = ExpressionWrapper(
        (_field(prefix, "total") - _field(prefix, "reserved")) * _field(prefix, "allocation_ratio"),
        output_field=FloatField(),
    )
    return Cast(_TruncToInteger(raw), BigIntegerField())


def can_provide_q(amount, used=0, prefix=""):
    """SQL for :meth:`Capacity.can_provide`: a condition on the inventory row.

    ``used`` is an int or an expression (the current usage of the inventory's
    provider and class, e.g. a Subquery summing allocations).
    """
    used_expr = used if hasattr(used, "resolve_expression") else Value(int(used))
    amount_value = Value(int(amount), output_field=BigIntegerField())
    step = NullIf(_field(prefix, "step_size"), Value(0))
    return Q(
        LessThanOrEqual(_field(prefix, "min_unit"), amount_value),
        GreaterThanOrEqual(_field(prefix, "max_unit"), amount_value),
        # step_size 0 (never stored) would mean "no constraint", as in Capacity.
        Exact(
            Coalesce(Mod(amount_value, step, output_field=BigIntegerField()), Value(0)),
            Value(0),
        ),
        LessThanOrEqual(
            ExpressionWrapper(used_expr + amount_value, output_field=BigIntegerField()),
            usable_expression(prefix),
        ),
    )
