"""etcd cluster faults under write load, at full length: a 3-member cluster on loopback, one server on it,
8 writers, a reflector-style watcher and a /readyz poll (tests/etcdfaults.py), through each fault for
``--seconds`` (20 by default; the test suite runs the same drills for 8 s):

- a follower hung (SIGSTOP) — target: writes >= 0.5x the rate before, no 5xx, watch gap < 3 s, /readyz 200;
- the leader hung, and the leader killed — target: writes and the watch resume within 5 s;
- quorum lost (two members killed) and restored — target: /readyz fails during, recovers by itself, no
  acknowledged write lost.

Run from the repository root: ``.venv/bin/python -m bench.etcd_faults_bench [--seconds 20]``.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from tests.etcdfaults import Figures, drill, faults
from tests.etcdproc import EtcdCluster


def verdict(name: str, figures: Figures) -> str:
    clean = not figures.lost and not figures.unseen and set(figures.ready_after) == {200}
    if name == "follower hung":
        met = (
            figures.ratio >= 0.5
            and not [code for code in figures.statuses if code >= 500]
            and figures.watch_gap < 3
            and set(figures.ready) == {200}
        )
    elif name == "quorum lost":
        met = 500 in figures.ready
    else:
        met = figures.write_gap < 5 and figures.watch_gap < 5
    return "met" if met and clean else "MISSED"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="how long each fault lasts")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        cluster = EtcdCluster(work / "etcd")
        cluster.start()
        try:
            for index, (name, fault) in enumerate(faults(cluster).items()):
                figures, _ = drill(cluster, work / f"run{index}", fault, length=args.seconds)
                print(
                    f"{name} for {args.seconds:g}s: {figures.summary()} [{verdict(name, figures)}]"
                )
        finally:
            cluster.stop()


if __name__ == "__main__":
    main()
