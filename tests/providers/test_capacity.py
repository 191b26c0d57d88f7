"""The capacity model in Python: how full an inventory is."""

from providers.capacity import Capacity, utilisation


def test_utilisation_is_the_share_of_usable_capacity_in_use():
    capacity = Capacity(total=10, reserved=2, allocation_ratio=2.0)  # 16 usable
    assert capacity.utilisation(4) == 25.0
    assert capacity.utilisation() == 0.0


def test_utilisation_goes_over_100_when_usage_exceeds_capacity():
    assert Capacity(total=8).utilisation(12) == 150.0


def test_an_inventory_with_nothing_usable_is_full_once_anything_is_used():
    nothing = Capacity(total=4, reserved=4)
    assert nothing.utilisation(0) == 0.0
    assert nothing.utilisation(1) == 100.0


def test_utilisation_of_a_summed_usable_amount_follows_the_same_rule():
    assert utilisation(30, 40) == 75.0
    assert utilisation(0, 0) == 0.0
    assert utilisation(3, 0) == 100.0
