"""Running karma's work on a Ray cluster (``--executor ray``): shards as Ray actors and tasks.

This package sits on the roof with the CLI and the evaluator: it imports ``karma.eval`` and
``graph.extract`` and nothing imports it back. Ray is optional (``pip install -e ".[ray]"``).
"""
