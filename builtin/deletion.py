"""Deleting every object of a resource, for the controllers that empty something before it goes (a
namespace's content, a CustomResourceDefinition's custom resources)."""

from __future__ import annotations

from apiserver.machinery import errors
from apiserver.registry.store import ListOptions, Store

__all__ = ["delete_all"]


async def delete_all(store: Store, namespace: str | None) -> int:
    """Delete every object of ``store`` (in ``namespace``, or everywhere for None); returns how many are
    still there, marked and waiting for their finalizers."""
    remaining = 0
    for obj in (await store.list(namespace, ListOptions())).items:
        metadata = obj["metadata"]
        try:
            _, gone = await store.delete(metadata.get("namespace"), metadata["name"])
        except errors.APIError as error:
            if error.code == 404:
                continue
            raise
        remaining += 0 if gone else 1
    return remaining
