"""``python -m acdb_gym``: the ``acdb`` command (:mod:`acdb_gym.cli`) without its script."""

from __future__ import annotations

import sys

from acdb_gym.cli import main

if __name__ == "__main__":
    sys.exit(main())
