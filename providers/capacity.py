"""The capacity model: the one place that knows how much an inventory can give.

Capacity is ``(total - reserved) * allocation_ratio`` (truncated to an
integer, as Placement does). A single request for ``amount`` units must
also respect ``min_unit``, ``max_unit`` and ``step_size``. The API, the
admin, the dashboard's "why not" explanation and the candidates engine all
ask this module; none of them re-implements the rules.
"""

from dataclasses import dataclass

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
        return int((self.total - self.reserved) * self.allocation_ratio)

    def free(self, used=0):
        return self.usable - used

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

    def consume(self, amount, used=0):
        """The new usage after taking ``amount``; raises CapacityExceeded if it does not fit."""
        found = self.shortfalls(amount, used)
        if found:
            raise CapacityExceeded(found)
        return used + amount
