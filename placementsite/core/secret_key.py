"""The secret key when ``DJANGO_SECRET_KEY`` is unset: random, generated once, kept private.

A fixed fallback key would let anyone sign session and ``messages`` cookies (the latter may
carry HTML marked safe), so there is none: the first start writes a random key to a file only
the service user can read, and every later start (and every worker) reads it back.
"""

import os
import secrets
import tempfile
from pathlib import Path


def load_or_create(path):
    """The key stored at ``path``, created there (mode 0600) when missing."""
    path = Path(path)
    try:
        key = path.read_text().strip()
    except FileNotFoundError:
        key = ""
    if key:
        return key
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written to a private temporary file and linked into place, so that a process starting at
    # the same moment reads either no file or the whole key, and exactly one key wins.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".secret_key-")  # mode 0600
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(50) + "\n")
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another process won the race (or left an empty file: read it below)
    finally:
        os.unlink(tmp)
    key = path.read_text().strip()
    if not key:
        raise RuntimeError(f"{path} is empty: delete it or set DJANGO_SECRET_KEY")
    return key
