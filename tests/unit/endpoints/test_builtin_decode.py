"""A value of the wrong JSON type in a built-in kind's body is a 400 BadRequest "cannot be handled", as kube
answers when its Go decoder fails (transformDecodeError in k8s.io/apiserver/pkg/endpoints/handlers, e.g.
"ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal bool into Go struct
field ConfigMap.data of type string"), before any validation; in a custom resource it is a 422 schema error."""

from __future__ import annotations

import httpx

from tests.shipped import CONFIGMAPS, CRONTABS, assert_status, crontab

SERVICES = "/api/v1/namespaces/default/services"


def configmap(name: str, data: object) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def test_a_configmap_value_of_the_wrong_type_is_a_bad_request(api: httpx.Client) -> None:
    status = assert_status(
        api.post(CONFIGMAPS, json=configmap("typed", {"enabled": True})), 400, "BadRequest"
    )
    assert status["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal bool into'
        " Go struct field ConfigMap.data of type string"
    )
    assert api.get(f"{CONFIGMAPS}/typed").status_code == 404  # nothing was stored


def test_the_decode_error_comes_before_validation_errors(api: httpx.Client) -> None:
    """An invalid name and a wrongly typed field: kube never reaches validation, so only the 400."""
    body = configmap("Not_A_Valid_Name", ["a", "list"])
    status = assert_status(api.post(CONFIGMAPS, json=body), 400, "BadRequest")
    assert status["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal array into'
        " Go struct field ConfigMap.data of type map[string]string"
    )


def test_an_update_of_a_service_with_a_wrongly_typed_field_is_a_bad_request(
    api: httpx.Client,
) -> None:
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "typed"},
        "spec": {"ports": [{"port": 80}]},
    }
    created = api.post(SERVICES, json=service)
    assert created.status_code == 201, created.text
    changed = created.json()
    changed["spec"]["ports"] = {"port": 80}  # an object where the schema has a list
    status = assert_status(api.put(f"{SERVICES}/typed", json=changed), 400, "BadRequest")
    assert status["message"] == (
        'Service in version "v1" cannot be handled as a Service: json: cannot unmarshal object into'
        " Go struct field ServiceSpec.spec.ports of type []v1.ServicePort"
    )


def test_a_custom_resource_with_a_wrongly_typed_field_stays_a_422(api: httpx.Client) -> None:
    body = crontab("typed")
    body["spec"]["replicas"] = "three"
    status = assert_status(api.post(CRONTABS, json=body), 422, "Invalid")
    causes = status["details"]["causes"]
    # the schema's cause, then the scale path's own (kube's customresource validateScaleSpec reads the
    # replicas path as an integer too)
    assert [(c["reason"], c["field"]) for c in causes] == [
        ("FieldValueTypeInvalid", "spec.replicas"),
        ("FieldValueInvalid", ".spec.replicas"),
    ]
