"""Where a resource's objects are stored, as kube-apiserver lays its keys out (the registry Store's
KeyRootFunc and KeyFunc over the resource prefix of its RESTOptions): /registry/<group>/<resource>/<ns>/<name>,
under the group and resource of ``stored_as`` when the objects are another resource's."""

from __future__ import annotations

from apiserver.machinery.scheme import ResourceType


def key_prefix(resource: ResourceType, namespace: str | None = None) -> str:
    """The prefix of every key of ``resource`` (in ``namespace``, if given)."""
    group, plural = resource.stored_as or (resource.group, resource.plural)
    root = f"/registry/{group}/{plural}/" if group else f"/registry/{plural}/"
    return f"{root}{namespace}/" if namespace else root


def object_key(resource: ResourceType, namespace: str | None, name: str) -> str:
    """The key of one object (a namespace given for a cluster-scoped resource is ignored)."""
    return f"{key_prefix(resource, namespace if resource.namespaced else None)}{name}"
