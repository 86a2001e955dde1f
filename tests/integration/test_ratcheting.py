"""Validation ratcheting through the server, in the case it exists for: a CRD's schema gets stricter,
the server is regenerated and restarted on the same data, and objects stored before stay updatable as long
as an update leaves their now-invalid values alone (KEP-4008; GA in Kubernetes 1.33)."""

from __future__ import annotations

from pathlib import Path

from tests.crdproject import crd_yaml, serve_crd
from tests.serverproc import ServerProcess

GADGETS = "/apis/ratchet.example.com/v1/namespaces/default/gadgets"
MERGE = {"content-type": "application/merge-patch+json"}


def crd(name_rules: str) -> str:
    schema = f"type: object\nproperties:\n  size: {{type: integer}}\n  name: {{type: string{name_rules}}}\n"
    return crd_yaml("ratchet.example.com", "Gadget", schema)


def serve(root: Path, data: Path, rules: str) -> ServerProcess:
    return serve_crd(root, data, "ratchet.example.com", crd(rules))


def test_a_stricter_schema_keeps_stored_objects_updatable(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    lax = serve(tmp_path / "project", data, "")
    try:
        body = {
            "apiVersion": "ratchet.example.com/v1",
            "kind": "Gadget",
            "metadata": {"name": "old"},
            "spec": {"name": "toolong", "size": 1},
        }
        assert lax.http("POST", GADGETS, json=body).status_code == 201
    finally:
        lax.stop()

    rule = (
        ", maxLength: 3, x-kubernetes-validations: [{rule: \"!self.contains('o')\", message: no o}]"
    )
    strict = serve(tmp_path / "project", data, rule)
    try:
        with strict.client() as client:
            grown = client.patch(f"{GADGETS}/old", json={"spec": {"size": 2}}, headers=MERGE)
            assert grown.status_code == 200, grown.text
            assert grown.json()["spec"] == {"name": "toolong", "size": 2}
            # the CEL failure ratcheting let through comes back as a warning, as kube sends it
            assert grown.headers.get_list("warning") == [
                '299 - "spec.name: Invalid value: \\"toolong\\": no o"'
            ]
            renamed = client.patch(
                f"{GADGETS}/old", json={"spec": {"name": "longer"}}, headers=MERGE
            )
            assert renamed.status_code == 422, renamed.text
            # too long: a blocking error, so the rules are not checked (one fieldless cause says so)
            assert [c["field"] for c in renamed.json()["details"]["causes"]] == [
                "spec.name",
                "<nil>",
            ]
            body = {**body, "metadata": {"name": "new"}}
            assert (
                client.post(GADGETS, json=body).status_code == 422
            )  # a create has nothing to keep
    finally:
        strict.stop()
