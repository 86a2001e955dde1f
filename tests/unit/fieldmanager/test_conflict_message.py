"""The wording of apply conflicts, from k8s.io/apimachinery/pkg/util/managedfields/internal/conflict.go
(``NewConflictError``, ``getConflictMessage``, ``printManager``) and its conflict_test.go, and the 409
``Status`` of ``errors.NewApplyConflict`` (staging/src/k8s.io/apimachinery/pkg/api/errors/errors.go)."""

from __future__ import annotations

from apiserver.fieldmanager import ApplyConflict, Conflict, conflict_message


def test_one_conflict_reads_like_the_conventions_example() -> None:
    message, causes = conflict_message(
        [Conflict("kubectl-client-side-apply", "stable.example.com/v1", ".spec.image")]
    )
    assert message == (
        "Apply failed with 1 conflict: conflict with "
        '"kubectl-client-side-apply" using stable.example.com/v1: .spec.image'
    )
    assert causes == [
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "kubectl-client-side-apply" using stable.example.com/v1',
            "field": ".spec.image",
        }
    ]


def test_conflict_test_go_cases() -> None:
    # conflict_test.go TestNewConflictError, without the "at <time>" suffix: BuildManagerIdentifier
    # drops the time, so a conflict found by the field manager never carries one.
    message, causes = conflict_message(
        [
            Conflict("foo", "v1", ".spec.replicas"),
            Conflict("bar", "v1", ".metadata.labels.app", operation="Apply"),
        ]
    )
    assert message == (
        'Apply failed with 2 conflicts: conflicts with "bar":\n- .metadata.labels.app\n'
        'conflicts with "foo" using v1:\n- .spec.replicas'
    )
    assert causes == [
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "foo" using v1',
            "field": ".spec.replicas",
        },
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "bar"',
            "field": ".metadata.labels.app",
        },
    ]
    message, _ = conflict_message([Conflict("foo", "v1", ".spec.replicas", subresource="scale")])
    assert message == (
        'Apply failed with 1 conflict: conflict with "foo" with subresource "scale" using v1: .spec.replicas'
    )


def test_several_paths_of_one_manager_keep_their_order() -> None:
    conflicts = [
        Conflict("foo", "v1", ".spec.replicas", "Update", "scale"),
        Conflict("bar", "v1", ".spec.replicas", "Apply"),
        Conflict("bar", "v1", ".spec.template", "Apply"),
    ]
    message, _ = conflict_message(conflicts)
    assert message == (
        "Apply failed with 3 conflicts: "
        'conflicts with "bar":\n- .spec.replicas\n- .spec.template\n'
        'conflicts with "foo" with subresource "scale" using v1:\n- .spec.replicas'
    )


def test_manager_names_are_go_quoted() -> None:
    message, _ = conflict_message([Conflict('we"ird\n', "v1", ".a")])
    assert message == 'Apply failed with 1 conflict: conflict with "we\\"ird\\n" using v1: .a'


def test_apply_conflict_is_a_409_status_with_causes_only() -> None:
    error = ApplyConflict(
        [Conflict("m", "apps/v1", '.spec.template.spec.containers[name="nginx"].image')]
    )
    status = error.status()
    assert status["code"] == 409
    assert status["reason"] == "Conflict"
    assert status["details"] == {
        "causes": [
            {
                "reason": "FieldManagerConflict",
                "message": 'conflict with "m" using apps/v1',
                "field": '.spec.template.spec.containers[name="nginx"].image',
            }
        ]
    }
    assert error.conflicts[0].manager == "m"
