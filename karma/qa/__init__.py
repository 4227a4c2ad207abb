"""``karma qa``: Karma-MV questions made from a researcher's own videos (features + a graph).

Sits above the graph builder (media -> scenes -> features -> CKG -> questions) and reuses the
synthesizer's question maker; ``karma.cli.qa`` only parses and delegates to :func:`make_qa`.
"""

from karma.qa.make import AnswerBiasError, QaMakeConfig, QaMakeSummary, make_qa

__all__ = ["AnswerBiasError", "QaMakeConfig", "QaMakeSummary", "make_qa"]
