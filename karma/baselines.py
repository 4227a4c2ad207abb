"""Moved to :mod:`karma.data.baselines`; this module re-exports it so old imports keep working."""

from karma.data.baselines import *  # noqa: F403
