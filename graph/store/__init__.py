"""Graph stores: read access to a CKG behind the ``GraphStore`` interface (networkx embedded default)."""

from graph.store.networkx_store import NetworkxStore

__all__ = ["NetworkxStore"]
