"""Waiting for a server's compactor (``--etcd-compaction-interval``) to drop a revision from history, instead of
sleeping for a few of its intervals: a loaded machine may need more, an idle one far fewer."""

from __future__ import annotations

import time

import httpx

POLL = 0.05


def wait_compacted(
    client: httpx.Client, collection: str, revision: str, within: float = 30.0
) -> httpx.Response:
    """Return the answer to a list of ``collection`` at exactly ``revision`` once that revision is compacted
    away (kube's 410 Expired; etcd3's interpretListError). ``revision`` must be older than the newest one:
    the compactor keeps the revision it compacts at."""
    params = {"resourceVersion": revision, "resourceVersionMatch": "Exact", "limit": "1"}
    deadline = time.monotonic() + within
    while (response := client.get(collection, params=params)).status_code == 200:
        assert time.monotonic() < deadline, f"revision {revision} was not compacted in {within} s"
        time.sleep(POLL)
    return response
