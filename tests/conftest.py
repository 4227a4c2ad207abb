"""Suite-wide settings.

The response cache: task runs, qa passes and Karma-MV runs read and write the shared response cache
by default. Tests that count the requests a scripted server received would then pass on a fresh
machine and fail on the second run of the suite (the answers come from the last session's cache).
So each test session gets a response cache file of its own (``KARMA_RESPONSE_CACHE``, read by
``karma.run.driver.open_response_cache``); everything else (installed models, indexes, graphs)
stays in the usual cache root. A ``KARMA_RESPONSE_CACHE`` already set is kept.
"""

from __future__ import annotations

import os
import shutil
import tempfile

_SESSION_CACHE: str | None = None


def pytest_configure(config: object) -> None:
    global _SESSION_CACHE
    if os.environ.get("KARMA_RESPONSE_CACHE"):
        return
    _SESSION_CACHE = tempfile.mkdtemp(prefix="karma-test-responses-")
    os.environ["KARMA_RESPONSE_CACHE"] = os.path.join(_SESSION_CACHE, "responses.sqlite")


def pytest_unconfigure(config: object) -> None:
    if _SESSION_CACHE is not None:
        os.environ.pop("KARMA_RESPONSE_CACHE", None)
        shutil.rmtree(_SESSION_CACHE, ignore_errors=True)
