"""Optimise one closed Edge shard: `python edge_optimize.py <shard folder>`.

Run as a child process by `apps.search.edge` (never imported by the web process):
`EdgeShard.optimize` holds the GIL for its whole run, so it must not run in a process
that serves requests. Lower priority than the web process, which keeps serving meanwhile.
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: edge_optimize.py <shard folder>", file=sys.stderr)
        return 2
    from qdrant_edge import EdgeShard

    try:
        os.nice(10)
    except OSError:  # not allowed: optimise at normal priority
        pass
    shard = EdgeShard.load(argv[1])
    try:
        shard.optimize()
        shard.flush()
    finally:
        shard.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
