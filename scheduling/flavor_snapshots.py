"""A flavor as a server was booted or resized with.

As Nova's ``instance.flavor``, a server keeps a copy of its flavor: a flavor's sizes never
change, but its extra specs may, and that edit is for new servers only. The audit, moves and
reverts read a server's copy, never the live flavor row.
"""

from .models import Flavor

SIZES = ("vcpus", "ram", "disk", "ephemeral", "swap")


def size_changes(flavor: Flavor, values: dict) -> list[str]:
    """The sizes ``values`` would change on an existing ``flavor``: as Nova, none may (servers
    were placed for them); every edge refuses them naming each."""
    return [size for size in SIZES if size in values and values[size] != getattr(flavor, size)]


def flavor_snapshot(flavor: Flavor) -> dict:
    """What a server keeps of ``flavor``."""
    return {
        "id": flavor.pk,
        "name": flavor.name,
        **{size: getattr(flavor, size) for size in SIZES},
        "extra_specs": dict(flavor.extra_specs or {}),
    }


def flavor_from_snapshot(snapshot: dict, fallback: Flavor | None = None) -> Flavor:
    """The flavor a snapshot describes, as an unsaved Flavor (its pk the original's), which the
    translator and the scheduler read as they read a flavor row. No snapshot (a row written
    before snapshots were kept): ``fallback``."""
    if not snapshot:
        return fallback
    flavor = Flavor(
        name=snapshot["name"],
        extra_specs=dict(snapshot.get("extra_specs") or {}),
        **{size: snapshot.get(size, 0) for size in SIZES},
    )
    flavor.pk = snapshot["id"]
    return flavor


def server_flavor(server) -> Flavor:
    """The flavor ``server`` was booted or last resized with."""
    return flavor_from_snapshot(server.flavor_snapshot, fallback=server.flavor)
