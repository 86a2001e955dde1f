"""Evaluating a compiled ValidatingAdmissionPolicy against successive writes (compiled.py, celenv.py): the
thread's contexts are reused and a value whose JSON is the one bound last is not bound again, so these check
that no write ever sees an earlier write's values, that CEL's types survive the reuse (1, 1.0 and true are
equal in Python, not in CEL), that library functions are there for the policies calling them, and that a
message built with string() is bounded by its value (not refused as over the per-call limit)."""

from __future__ import annotations

from typing import Any

from builtin.admissionregistration.compiled import (
    MEMO_KEY_BYTES,
    CompiledPolicy,
    Failure,
    compile_policy,
)


def policy(**spec: Any) -> CompiledPolicy:
    return compile_policy({"metadata": {"name": "p"}, "spec": spec})


def failures(compiled: CompiledPolicy, obj: Any, params: Any = None) -> list[Failure]:
    projected = compiled.with_params(compiled.project({"object": obj}), params)
    return compiled.failures(compiled.bind(projected))


def test_a_failed_variable_never_shows_an_earlier_writes_value() -> None:
    compiled = policy(
        variables=[{"name": "replicas", "expression": "object.spec.replicas"}],
        validations=[{"expression": "variables.replicas < 5", "message": "too many"}],
    )
    assert failures(compiled, {"spec": {"replicas": 1}}) == []
    # no replicas: the variable fails, and so does the validation reading it (kube: no such key)
    (failure,) = failures(compiled, {"spec": {}})
    assert failure.errored and "resulted in error" in failure.message
    assert [f.message for f in failures(compiled, {"spec": {"replicas": 7}})] == ["too many"]


def test_a_value_equal_in_python_but_not_in_cel_is_bound_again() -> None:
    compiled = policy(validations=[{"expression": "object.spec.x == 1", "message": "not one"}])
    assert failures(compiled, {"spec": {"x": 1}}) == []
    # True == 1 in Python, not in CEL (heterogeneous equality): false, not the earlier write's true
    assert [f.message for f in failures(compiled, {"spec": {"x": True}})] == ["not one"]
    assert failures(compiled, {"spec": {"x": 1}}) == []
    (failure,) = failures(compiled, {"spec": {"x": 2}})
    assert failure.message == "not one"


def test_policies_with_and_without_library_functions_share_the_thread() -> None:
    plain = policy(validations=[{"expression": "object.n < 3"}])
    regex = policy(validations=[{"expression": "object.s.find('[0-9]+') == '42'"}])
    quantity = policy(
        validations=[{"expression": "quantity(object.q).isLessThan(quantity('1Gi'))"}]
    )
    assert plain.functions == frozenset()
    assert regex.functions == {"find"}
    for _ in range(2):
        assert failures(plain, {"n": 1}) == []
        assert failures(regex, {"s": "ab42"}) == []
        assert failures(quantity, {"q": "512Mi"}) == []
        assert [f.message for f in failures(quantity, {"q": "2Gi"})] == [
            "failed expression: quantity(object.q).isLessThan(quantity('1Gi'))"
        ]


def test_params_are_read_for_each_evaluation() -> None:
    compiled = policy(
        paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
        validations=[
            {
                "expression": "object.spec.replicas <= int(params.data.max)",
                "messageExpression": "'at most ' + params.data.max + ', not ' + string(object.spec.replicas)",
            }
        ],
    )
    small, large = {"data": {"max": "2"}}, {"data": {"max": "20"}}
    assert [f.message for f in failures(compiled, {"spec": {"replicas": 5}}, small)] == [
        "at most 2, not 5"  # the message expression runs: its bound follows the values (string())
    ]
    assert failures(compiled, {"spec": {"replicas": 5}}, large) == []
    assert len(failures(compiled, {"spec": {"replicas": 5}}, small)) == 1


def test_the_same_inputs_are_decided_once_and_new_ones_afresh() -> None:
    compiled = policy(
        paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
        validations=[
            {"expression": "object.spec.replicas <= int(params.data.max)", "message": "no"}
        ],
    )

    def decide(replicas: Any, limit: str) -> Any:
        projected = compiled.with_params(
            compiled.project(
                {"object": {"metadata": {"name": "x"}, "spec": {"replicas": replicas}}}
            ),
            {"data": {"max": limit}},
        )
        return compiled.decide(projected, compiled.key(projected))

    first = decide(5, "2")
    assert [f.message for f in first.failures] == ["no"]
    assert decide(5, "2") is first  # remembered: the name is not read, so it is not part of the key
    assert decide(5, "20").failures == ()  # other params: decided again
    assert decide(5.0, "2") is not first  # JSON tells 5 from 5.0
    assert [f.message for f in decide(3, "2").failures] == ["no"]


def test_a_policy_asking_the_authorizer_is_never_remembered() -> None:
    compiled = policy(
        validations=[{"expression": "authorizer.group('').resource('pods').check('get').allowed()"}]
    )
    projected = compiled.project({"object": {}, "authorizer": {"kind": "authorizer"}})
    assert compiled.key(projected) is None


def test_large_inputs_are_not_remembered() -> None:
    """The memory of decisions holds keys of at most MEMO_KEY_BYTES: a policy reading a whole spec must
    not keep request bodies (1,024 of them, each up to the body limit) alive."""
    compiled = policy(validations=[{"expression": "size(object.spec.items) < 100000"}])
    small = compiled.project({"object": {"spec": {"items": ["a"] * 10}}})
    large = compiled.project({"object": {"spec": {"items": ["a"] * (MEMO_KEY_BYTES // 2)}}})
    assert compiled.key(small) is not None
    assert compiled.key(large) is None
    assert compiled.decide(large, None).failures == ()
