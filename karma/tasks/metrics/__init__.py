"""Metric suites of neighbouring benchmarks that karma scores from user-supplied predictions."""
