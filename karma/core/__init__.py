"""karma's ground floor: the shared vocabulary every package may import.

Rule of the house: ``graph/``, ``retrieval/`` and ``pipelines/`` import from ``karma`` only
``karma.core`` and ``karma.data``; nothing here imports the CLI, the evaluator or the synthetic
world generator. ``tests/karma/test_import_layers.py`` checks it.
"""
