"""Files only the service user may read (mode 0600): the SQLite database, the first-start
credentials. Created with that mode, never widened after the fact."""

import os
from pathlib import Path


def create_private(path):
    """Create ``path`` empty with mode 0600 unless it exists (an empty file is a valid empty
    SQLite database, which SQLite then fills; its journals take the file's mode)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        pass


def write_private(path, text):
    """Write ``text`` to ``path`` (replacing it), readable and writable by its owner only."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # an older file may have had a wider mode
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
