"""The run floor: the machinery every task's run shares, below every task (Karma-MV included).

``karma.run`` imports from karma only ``karma.core`` and ``karma.data`` (and the ``graph``,
``retrieval`` and ``pipelines`` libraries); ``karma.tasks``, ``karma.qa`` and ``karma.eval`` build on
it (``tests/karma/test_import_layers.py`` keeps it that way):

* ``driver`` (with ``scheduler`` and ``cache``): the one answering loop and its response cache;
* ``rundir``: the run folder's lock and the resume check; ``jsonl``: the append-only record files;
* ``hygiene``: the error-rate stop and its ``hygiene.json``;
* ``aggregate`` and ``stats``: the one aggregation core and its cluster bootstrap / McNemar;
* ``plots``: the report figures; ``selection``: which items ``--limit N`` keeps.
"""
