"""The ValidatingAdmissionPolicy admission plugin (kube's k8s.io/apiserver/pkg/admission/plugin/policy/
validating): every binding whose policy and own matchResources select a write evaluates the policy's CEL
validations on ``object``, ``oldObject``, ``request``, ``params``, ``namespaceObject``, ``authorizer`` and
``variables``; a failed validation denies the write (Deny), adds a Warning header (Warn) or an audit
annotation (Audit), as the binding's validationActions say, in kube's words. A policy's expressions are
compiled once per version of it; a configuration error (a missing policy's params, an unknown paramKind)
and an evaluation error are failures under the policy's failurePolicy.

The plugin follows policies and bindings with informers (it is both kinds' controller), and writes each
policy's ``status`` (observedGeneration, typeChecking) as it learns of a new generation."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeVar

from apiserver.admission.interface import Attributes, Operation
from apiserver.audit.annotations import add_annotations
from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from apiserver.machinery.scheme import VersionType
from apiserver.registry.context import ServerContext
from apiserver.registry.offload import run_heavy
from apiserver.registry.store import ListOptions, Store
from apiserver.storage.interface import StorageError
from builtin.admissionregistration.authz import Asking, authorizer_value
from builtin.admissionregistration.compiled import (
    CompiledPolicy,
    Failure,
    compile_policy,
)
from builtin.admissionregistration.cost import HEAVY_COST
from builtin.admissionregistration.matching import namespace_selected, object_selected
from builtin.admissionregistration.review import admission_review
from builtin.admissionregistration.rules import matched_version
from builtin.admissionregistration.typecheck import type_warnings
from builtin.rbac.aggregation import selector_requirements
from builtin.rbac.informer import Informer

log = logging.getLogger(__name__)
GROUP = "admissionregistration.k8s.io"
FAILURE_ANNOTATION = "validation.policy.admission.k8s.io/validation_failure"
MEMO_SIZE = 4096
_UNKNOWN = object()
_BY_NAME = object()
"""Memoized for a match whose rules name resources: the answer depends on the write's name."""
_CODES = {"Forbidden": 403, "Unauthorized": 401, "RequestEntityTooLarge": 413, "Invalid": 422}


class ConfigurationError(Exception):
    """The binding cannot be applied (kube: "failed to configure binding: ...")."""


class _Follow:
    """An informer handler keeping one kind's objects by name and telling the plugin of changes."""

    def __init__(self, changed: Callable[[Object], None]) -> None:
        self.objects: dict[str, Object] = {}
        self.on_change = changed

    def replace(self, objects: list[dict[str, Any]]) -> None:
        self.objects = {o["metadata"]["name"]: o for o in objects}
        for obj in objects:
            self.on_change(obj)

    def changed(self, event_type: str, obj: dict[str, Any]) -> None:
        if event_type == "DELETED":
            self.objects.pop(obj["metadata"]["name"], None)
        else:
            self.objects[obj["metadata"]["name"]] = obj
            self.on_change(obj)


Compiled = TypeVar("Compiled")


def compiled_once(
    cache: dict[tuple[str, str], Compiled | str],
    policy: Object,
    compile: Callable[[Object], Compiled],
) -> Compiled | str:
    """The policy compiled once per resourceVersion (``cache`` keeps only each name's latest), or why it
    does not compile: a policy is compiled when a write first needs it, not on every write."""
    key = (policy["metadata"]["name"], str(policy["metadata"].get("resourceVersion", "")))
    found = cache.get(key)
    if found is None:
        try:
            found = compile(policy)
        except ValueError as error:
            found = f"compilation failed: {error}"
        for stale in [k for k in cache if k[0] == key[0]]:
            del cache[stale]
        cache[key] = found
    return found


class ValidatingPolicies:
    plurals: ClassVar[tuple[str, str]] = (
        "validatingadmissionpolicies",
        "validatingadmissionpolicybindings",
    )
    """The policies' and the bindings' resources, which the plugin follows."""

    def __init__(self, context: ServerContext) -> None:
        self.context = context
        self.policies = _Follow(self._policy_changed)
        self.bindings = _Follow(self._forget_rules)
        self.compiled: dict[tuple[str, str], CompiledPolicy | str] = {}
        """By (name, resourceVersion): the compiled policy, or why it does not compile."""
        self.informers: list[Informer] = []
        self.ruled: dict[tuple[Any, ...], VersionType | object | None] = {}
        """Memo of ``_ruled``, forgotten whenever a policy or binding changes."""
        self.ruled_matches: dict[int, Any] = {}
        self.status_writes: set[asyncio.Task[None]] = set()
        self.param_stores: dict[tuple[str, str], Store] = {}
        """By (group, kind): the store of a paramKind (checked to be still the server's)."""

    # -- following policies and bindings -------------------------------------------------------------------

    async def start(self) -> None:
        if self.informers:  # one object serves both kinds' controller entries
            return
        for plural, handler in zip(self.plurals, (self.policies, self.bindings), strict=True):
            informer = Informer(self.context.store(GROUP, plural), handler)
            self.informers.append(informer)
            await informer.start()

    async def stop(self) -> None:
        informers, self.informers = self.informers, []
        for informer in informers:
            await informer.stop()
        for task in list(self.status_writes):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def _forget_rules(self, changed: Object) -> None:
        self.ruled.clear()
        self.ruled_matches.clear()

    def _policy_changed(self, policy: Object) -> None:
        self._forget_rules(policy)
        status = policy.get("status") or {}
        generation = policy["metadata"].get("generation", 1)
        if status.get("observedGeneration") != generation:
            task = asyncio.get_running_loop().create_task(self._write_status(policy))
            self.status_writes.add(task)
            task.add_done_callback(self.status_writes.discard)

    async def _write_status(self, policy: Object) -> None:
        """observedGeneration and the type checking of this generation (kube's type-checking controller)."""
        name, generation = policy["metadata"]["name"], policy["metadata"].get("generation", 1)
        warnings = type_warnings(policy, self.context)
        store = self.context.store(GROUP, "validatingadmissionpolicies")

        def with_status(current: Object) -> Object:
            if current["metadata"].get("generation", 1) != generation:
                return current
            current["status"] = {
                **(current.get("status") or {}),
                "observedGeneration": generation,
                "typeChecking": {"expressionWarnings": warnings} if warnings else {},
            }
            return current

        try:
            await store.update(None, name, with_status, subresource="status")
        except (errors.APIError, StorageError) as error:
            log.info("status of ValidatingAdmissionPolicy %s not written: %s", name, error)

    def compiled_policy(self, policy: Object) -> CompiledPolicy | str:
        return compiled_once(self.compiled, policy, compile_policy)

    # -- admission --------------------------------------------------------------------------------------------

    def handles(self, operation: Operation) -> bool:
        return bool(self.bindings.objects) and operation is not Operation.CONNECT

    async def validate(self, attributes: Attributes) -> None:
        denied: list[tuple[str, str, Failure]] = []
        audited: list[dict[str, Any]] = []
        for binding_name in sorted(self.bindings.objects):
            binding = self.bindings.objects[binding_name]
            spec = binding.get("spec") or {}
            policy = self.policies.objects.get(str(spec.get("policyName")))
            if policy is None:
                continue
            version = await self._selected(policy, binding, attributes)
            if version is None:
                continue
            compiled = self.compiled_policy(policy)
            failures = await self._failures(compiled, policy, binding, attributes, version)
            actions = spec.get("validationActions") or []
            policy_name = policy["metadata"]["name"]
            for failure in failures:
                if "Deny" in actions:
                    denied.append((policy_name, binding_name, failure))
                if "Warn" in actions:
                    attributes.warnings.append(
                        f"Validation failed for ValidatingAdmissionPolicy '{policy_name}' with "
                        f"binding '{binding_name}': {failure.message}"
                    )
                if "Audit" in actions:
                    audited.append(
                        {
                            "message": failure.message,
                            "policy": policy_name,
                            "binding": binding_name,
                            "expressionIndex": failure.index,
                            "validationActions": actions,
                        }
                    )
        if audited:
            add_annotations({FAILURE_ANNOTATION: json.dumps(audited, separators=(",", ":"))})
        if denied:
            raise self._denial(attributes, *denied[0])

    async def _selected(
        self, policy: Object, binding: Object, attributes: Attributes
    ) -> VersionType | None:
        """The version the policy sees the write in, when both the policy's matchConstraints and the
        binding's matchResources (when it has them) select it."""
        version = await self._matched(
            (policy.get("spec") or {}).get("matchConstraints"), attributes
        )
        resources = (binding.get("spec") or {}).get("matchResources")
        if version is None or (resources and await self._matched(resources, attributes) is None):
            return None
        return version

    async def _matched(self, match: Any, attributes: Attributes) -> VersionType | None:
        if not isinstance(match, dict):
            return None
        version = self._ruled(match, attributes)
        if version is None:
            return None
        if not object_selected(match, attributes):
            return None
        if not await namespace_selected(match, attributes, self.context):
            return None
        return version

    def _ruled(self, match: dict[str, Any], attributes: Attributes) -> VersionType | None:
        """The version ``match``'s resource rules select the write in (and its exclusions do not), None
        when they do not. Memoized by what the rules look at (and the match itself, by identity: a changed
        policy or binding is a new object), since every write of every kind asks every binding."""
        written = attributes.request_version or attributes.version
        resource = attributes.resource
        key = (
            id(match), resource.group, resource.plural, written.name, attributes.subresource,
            attributes.operation, bool(attributes.namespace),
        )  # fmt: skip
        cached = self.ruled.get(key, _UNKNOWN)
        if cached is not _UNKNOWN and cached is not _BY_NAME:
            return cached  # type: ignore[return-value]
        rules = [r for r in match.get("resourceRules") or () if _named(r, attributes)]
        version = matched_version(
            rules, attributes, written, match.get("matchPolicy", "Equivalent") == "Equivalent"
        )
        excluded = [r for r in match.get("excludeResourceRules") or () if _named(r, attributes)]
        if (
            version is not None
            and excluded
            and matched_version(excluded, attributes, version, False) is not None
        ):
            version = None
        if len(self.ruled) >= MEMO_SIZE:
            self.ruled.clear()
        self.ruled[key] = _BY_NAME if cached is _BY_NAME or _names(match) else version
        self.ruled_matches[id(match)] = match  # keeps the id from being reused while memoized
        return version

    async def _failures(
        self, compiled: CompiledPolicy | str, policy: Object, binding: Object,
        attributes: Attributes, version: VersionType,
    ) -> list[Failure]:  # fmt: skip
        """The validations that fail for this binding (each of its params), configuration and evaluation
        errors included under failurePolicy Fail."""
        fails_closed = (policy.get("spec") or {}).get("failurePolicy", "Fail") != "Ignore"
        if isinstance(compiled, str):
            return [Failure(0, compiled, "")] if fails_closed else []
        try:
            all_params = await self._params(policy, binding, attributes)
        except ConfigurationError as error:
            return [Failure(0, f"failed to configure binding: {error}", "")] if fails_closed else []
        variables = await self.admission_variables(
            compiled.needed,
            attributes,
            version,
            _in_version(attributes.obj, version),
            _in_version(attributes.old, version),
        )
        asking = Asking(self.context.authorizer, attributes.user)
        projected = compiled.project(variables)
        inputs = []
        for params in all_params:
            with_params = compiled.with_params(projected, params)
            inputs.append((with_params, compiled.key(with_params)))
        if not all(key in compiled.decisions for _, key in inputs) and self._heavy(
            compiled, inputs
        ):
            found, annotations = await run_heavy(_evaluate, compiled, inputs, fails_closed, asking)
        else:
            found, annotations = _evaluate(compiled, inputs, fails_closed, asking)
        add_annotations(annotations)
        return found

    @staticmethod
    def _heavy(compiled: CompiledPolicy, inputs: list[tuple[dict[str, Any], bytes | None]]) -> bool:
        """Whether evaluating for all ``inputs`` may cost more than HEAVY_COST: known at once when their
        JSON is small enough (CompiledPolicy.safe_size), else bounded from their sizes."""
        safe = compiled.safe_size
        if all(key is not None and len(key) <= safe for _, key in inputs):
            return False
        return compiled.bound(inputs[0][0]) * len(inputs) > HEAVY_COST

    async def admission_variables(
        self, needed: Mapping[str, Any], attributes: Attributes, version: VersionType,
        obj: Object | None, old: Object | None,
    ) -> dict[str, Any]:  # fmt: skip
        """The admission variables a policy's expressions read (``needed``): the objects (in the
        version the policy sees), and the request, namespace and authorizer when they are read."""
        variables = {"object": obj, "oldObject": old}
        if "request" in needed:
            variables["request"] = cel_request(attributes, version)
        if "namespaceObject" in needed:
            variables["namespaceObject"] = await self._namespace(attributes)
        if "authorizer" in needed:
            variables["authorizer"] = authorizer_value(attributes)
        return variables

    async def _namespace(self, attributes: Attributes) -> Object | None:
        if not attributes.namespace:
            return None
        try:
            namespace, _ = await self.context.store("", "namespaces").get_rendered(
                None, attributes.namespace
            )
        except errors.APIError:
            return None
        return namespace

    async def _params(
        self, policy: Object, binding: Object, attributes: Attributes
    ) -> list[Object | None]:
        """The params each evaluation sees: [None] without a paramKind; the object paramRef names or the
        objects its selector matches; none found is a configuration error with parameterNotFoundAction
        Deny and no evaluation with Allow (kube's collectParams)."""
        kind = (policy.get("spec") or {}).get("paramKind")
        if not kind:
            return [None]
        ref = (binding.get("spec") or {}).get("paramRef")
        if not isinstance(ref, dict):
            raise ConfigurationError("no paramRef specified")
        store = self._param_store(kind)
        namespace: str | None = None
        if store.resource.namespaced:
            namespace = str(ref.get("namespace") or attributes.namespace)
            if not namespace:
                raise ConfigurationError(
                    "cannot use namespaced paramRef in policy binding that matches cluster-scoped "
                    "resources"
                )
        found: list[Object | None] = []
        if ref.get("name"):
            try:  # read-only (the cache's own object): expressions never change their params
                found.append((await store.get_rendered(namespace, str(ref["name"])))[0])
            except errors.APIError as error:
                if error.code != 404:
                    raise ConfigurationError(error.message) from None
        else:
            requirements = selector_requirements(ref.get("selector") or {})
            page = await store.list(namespace, ListOptions())
            found.extend(
                item
                for item in page.items
                if requirements is not None
                and all(r.matches(item["metadata"].get("labels") or {}) for r in requirements)
            )
        if not found and ref.get("parameterNotFoundAction", "Deny") != "Allow":
            raise ConfigurationError(
                "no params found for policy binding with `Deny` parameterNotFoundAction"
            )
        return found

    def _param_store(self, kind: Any) -> Store:
        api_version = str(kind.get("apiVersion", ""))
        group = api_version.rpartition("/")[0]
        wanted = (group, str(kind.get("kind")))
        known = self.param_stores.get(wanted)
        if known is not None and self.context.stores.get(_store_key(known)) is known:
            return known
        for store in self.context.stores.values():
            if (store.resource.group, store.resource.kind) == wanted:
                self.param_stores[wanted] = store
                return store
        raise ConfigurationError(
            f"failed to find resource referenced by paramKind: '{api_version}, "
            f"Kind={kind.get('kind')}'"
        )

    @staticmethod
    def _denial(
        attributes: Attributes, policy: str, binding: str, failure: Failure
    ) -> errors.APIError:
        """kube's admission.NewForbidden with the validation's reason (Invalid by default) and its code."""
        message = (
            f"ValidatingAdmissionPolicy '{policy}' with binding '{binding}' denied request: "
            f"{failure.message}"
        )
        resource = attributes.resource
        name = attributes.name or str(
            ((attributes.obj or {}).get("metadata") or {}).get("name", "")
        )
        error = errors.forbidden(resource.plural, resource.group, name, message)
        error.reason = failure.reason or "Invalid"
        error.code = _CODES.get(error.reason, 422)
        error.causes = [errors.StatusCause("", message)]
        return error


def _store_key(store: Store) -> tuple[str, str]:
    return (store.resource.group, store.resource.plural)


def _in_version(obj: Object | None, version: VersionType) -> Object | None:
    """The hub object in ``version``, not copied when that is the hub (expressions never change it)."""
    return None if obj is None else version.from_internal(obj)


def cel_request(attributes: Attributes, version: VersionType) -> dict[str, Any]:
    """The ``request`` variable: the AdmissionRequest without its objects (kube's CreateAdmissionRequest
    leaves them to ``object`` and ``oldObject``)."""
    request: dict[str, Any] = admission_review(attributes, version, None, None)["request"]
    del request["object"], request["oldObject"]
    return request


def _names(match: dict[str, Any]) -> bool:
    """Whether any of ``match``'s rules names resources (then the write's name is part of the answer)."""
    return any(
        isinstance(r, dict) and r.get("resourceNames")
        for key in ("resourceRules", "excludeResourceRules")
        for r in match.get(key) or ()
    )


def _named(rule: Any, attributes: Attributes) -> bool:
    """A rule's resourceNames (none: every name) include the write's."""
    names = rule.get("resourceNames") if isinstance(rule, dict) else None
    return not names or attributes.name in names


def validating_policies(context: ServerContext) -> ValidatingPolicies:
    """The server's one ValidatingAdmissionPolicy plugin (admission plugin and both kinds' controller)."""
    return context.part(ValidatingPolicies)


def _evaluate(
    compiled: CompiledPolicy, inputs: list[tuple[dict[str, Any], bytes | None]],
    fails_closed: bool, asking: Asking,
) -> tuple[list[Failure], dict[str, str]]:  # fmt: skip
    """The failures of a policy's evaluation for each params (``inputs``: the projected admission
    variables with each params, and the key remembering their decision), and the audit annotations it
    adds. Running out of budget is an error under the failurePolicy (kube's
    policyDecisionActionForError)."""
    found: list[Failure] = []
    annotations: dict[str, str] = {}
    with asking:
        for projected, key in inputs:
            decision = compiled.decide(projected, key)
            if decision.condition_error is not None:
                if fails_closed:
                    found.append(Failure(0, decision.condition_error, ""))
                continue
            annotations.update(decision.annotations)
            failures = decision.failures
            if not fails_closed:  # evaluation errors are ignored, failed validations are not
                failures = tuple(f for f in failures if not f.errored)
            found.extend(failures)
    return found, annotations
