"""An object printed through its Go struct, as kube answers it once stored (encoding.goprint), on the
generated tables of real kinds; each case is an answer recorded from kube-apiserver 1.34 in
tests/differential/golden/ (verbs-core events, rbac roles, tables leases)."""

from __future__ import annotations

from apiserver.encoding.goprint import go_printed
from apiserver.encoding.protobuf import decode_message, encode_message
from generated.coordination_k8s_io.v1.protobuf import LEASE
from generated.core.v1.protobuf import CONFIG_MAP, EVENT
from generated.rbac_authorization_k8s_io.v1.protobuf import ROLE

EVENT_BODY = {
    "apiVersion": "v1",
    "kind": "Event",
    "metadata": {"name": "e", "namespace": "default"},
    "involvedObject": {"kind": "ConfigMap", "name": "c"},
    "reason": "Tested",
    "type": "Normal",
}


def test_non_omitempty_scalars_print_at_zero_and_structs_as_empty_objects() -> None:
    printed = go_printed(EVENT_BODY, EVENT.message)
    # core/v1 Event: ReportingController string `json:"reportingComponent"` (no omitempty); Source
    # EventSource `json:"source,omitempty"` (a struct: omitempty never drops it); EventTime metav1.MicroTime
    assert printed["reportingComponent"] == ""
    assert printed["reportingInstance"] == ""
    assert printed["source"] == {}
    assert printed["eventTime"] is None
    assert printed["involvedObject"] == {"kind": "ConfigMap", "name": "c"}
    assert "count" not in printed  # int32 `json:"count,omitempty"` at zero
    assert EVENT_BODY.get("source") is None, "the object given is not changed"


def test_an_empty_non_omitempty_list_is_null_once_stored() -> None:
    # rbac/v1 Role: Rules []PolicyRule `json:"rules"`; protobuf keeps no empty list, so kube reads nil
    assert go_printed({"metadata": {}, "rules": []}, ROLE.message)["rules"] is None
    assert go_printed({"metadata": {}}, ROLE.message)["rules"] is None


def test_omitempty_zeros_and_empty_maps_are_left_out() -> None:
    printed = go_printed({"metadata": {}, "data": {}, "binaryData": {}}, CONFIG_MAP.message)
    assert printed == {"metadata": {}}


def test_pointers_print_only_when_set() -> None:
    # coordination/v1 Lease: AcquireTime *metav1.MicroTime, Immutable-like pointers keep a zero value
    spec = go_printed({"metadata": {}, "spec": {"leaseDurationSeconds": 0}}, LEASE.message)["spec"]
    assert spec == {"leaseDurationSeconds": 0}
    assert (
        go_printed({"metadata": {}, "immutable": False}, CONFIG_MAP.message)["immutable"] is False
    )


def test_an_object_already_printed_is_returned_as_it_is() -> None:
    printed = go_printed(EVENT_BODY, EVENT.message)
    assert go_printed(printed, EVENT.message) is printed


def test_printing_agrees_with_a_protobuf_round_trip() -> None:
    """What kube's etcd store does: encode to protobuf, decode back (metadata aside)."""
    for body, codec in ((EVENT_BODY, EVENT), ({"metadata": {}, "rules": []}, ROLE)):
        round_trip = decode_message(codec.message, encode_message(codec.message, body))
        printed = go_printed(body, codec.message)
        envelope = ("metadata", "apiVersion", "kind")  # the registry's, and protobuf's envelope
        assert {k: v for k, v in printed.items() if k not in envelope} == {
            k: v for k, v in round_trip.items() if k not in envelope
        }
