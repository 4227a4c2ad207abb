"""Moved to :mod:`karma.core.records`; this module re-exports it so old imports keep working."""

from karma.core.records import *  # noqa: F403
