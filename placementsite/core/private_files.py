"""Files only the service user may read (mode 0600): the SQLite database, the first-start
credentials; and directories only it may enter (0700): the filesystem broker's, whose
messages carry task arguments. Created with that mode, never widened after the fact."""

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


def make_private_dir(path):
    """Create the directory ``path`` (and missing parents) with mode 0700; one that exists
    with a wider mode (an older installation's) is narrowed to 0700."""
    path = Path(path)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.stat().st_mode & 0o077:
        path.chmod(0o700)
