"""The storage contract as checks any backend can run: each check is a coroutine taking an ``OpenStore`` (a
callable returning an async context manager that starts a fresh, empty backend and closes it) and raising
AssertionError when the backend breaks the contract. No test framework is needed to run one; with pytest a
backend's test module parametrizes over ``CHECKS``::

    @pytest.mark.parametrize("check", CHECKS.values(), ids=CHECKS.keys())
    def test_storage_contract(check: Check) -> None:
        asyncio.run(check(open_my_backend))

The checks state exact revisions (the first write of a fresh store is revision 1); a backend that cannot be
emptied (a shared etcd) runs them through ``RebasedStorage`` with a fresh key prefix per check.
"""

from __future__ import annotations

from apiserver.storage.testing.lists import LISTS
from apiserver.storage.testing.rebased import RebasedStorage, RebasedWatch
from apiserver.storage.testing.support import Check, Events, OpenStore
from apiserver.storage.testing.watches import WATCHES
from apiserver.storage.testing.writes import WRITES

CHECKS: dict[str, Check] = {**WRITES, **LISTS, **WATCHES}
"""Every check of the contract by name, in the order writes, lists, watches and compaction."""

__all__ = ["CHECKS", "Check", "Events", "OpenStore", "RebasedStorage", "RebasedWatch"]
