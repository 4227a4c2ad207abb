"""The ``karma`` command line (``karma.cli.main``).

Importing the package first imports the plug-in modules named in ``$KARMA_PLUGINS``
(``karma.core.registry.load_plugins``), so their backends, retrievers and tasks are registered before
any command reads a registry; a plug-in that cannot be imported is one line on stderr and exit 2.
"""

from __future__ import annotations

import sys

from karma.core.errors import InputError
from karma.core.registry import load_plugins

try:
    load_plugins()
except InputError as _exc:
    print(f"error: {_exc}", file=sys.stderr)
    raise SystemExit(2) from None
