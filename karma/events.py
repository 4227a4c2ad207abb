"""Moved to :mod:`karma.core.events`; this module re-exports it so old imports keep working."""

from karma.core.events import *  # noqa: F403
