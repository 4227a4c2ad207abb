"""``python -m graph.neo4j start|stop|status|install``: the local server (what scripts/neo4j.sh runs)."""

import sys

from graph.neo4j.server import main

sys.exit(main())
