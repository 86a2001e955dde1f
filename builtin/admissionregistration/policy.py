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
from typing import Any, ClassVar, Protocol, TypeVar

from apiserver.admission.interface import Attributes, Operation
from apiserver.audit.annotations import add_annotations
from apiserver.fieldmanager import apply
from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from apiserver.registry.meta import now_rfc3339
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
from builtin.admissionregistration.equivalents import Matched
from builtin.admissionregistration.matching import MATCH_RESOURCES, Matcher
from builtin.admissionregistration.review import admission_review
from builtin.admissionregistration.typecheck import type_warnings
from builtin.rbac.aggregation import selector_requirements
from builtin.rbac.informer import Informer
from builtin.wants import WantsAuthorizer, WantsParts, WantsStores

log = logging.getLogger(__name__)
GROUP = "admissionregistration.k8s.io"
STATUS_MANAGER = "validatingadmissionpolicy-status"
"""The field manager of kube's type-checking controller (ControllerName in its controller.go)."""
FAILURE_ANNOTATION = "validation.policy.admission.k8s.io/validation_failure"
_CODES = {"Forbidden": 403, "Unauthorized": 401, "RequestEntityTooLarge": 413, "Invalid": 422}


class ConfigurationError(Exception):
    """The policy or binding cannot be applied: kube's "failed to configure policy: ..." (``binding``
    None) or "failed to configure binding: ...", a denial under failurePolicy Fail whatever the
    binding's validationActions."""

    def __init__(self, message: str, binding: str | None) -> None:
        what = "binding" if binding is not None else "policy"
        super().__init__(f"failed to configure {what}: {message}")
        self.binding = binding


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


class PolicyServer(WantsStores, WantsAuthorizer, Protocol):
    """The Stores (the policies' and bindings', the namespaces', every kind a policy's params name) and the
    authorizer a policy's ``authorizer`` variable asks."""


class ValidatingPolicies:
    plurals: ClassVar[tuple[str, str]] = (
        "validatingadmissionpolicies",
        "validatingadmissionpolicybindings",
    )
    """The policies' and the bindings' resources, which the plugin follows."""

    def __init__(self, context: PolicyServer) -> None:
        self.context = context
        self.policies = _Follow(self._policy_changed)
        self.bindings = _Follow(self._forget_rules)
        self.compiled: dict[tuple[str, str], CompiledPolicy | str] = {}
        """By (name, resourceVersion): the compiled policy, or why it does not compile."""
        self.informers: list[Informer] = []
        self.matcher = Matcher(context, MATCH_RESOURCES)
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
        self.matcher.forget()

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
        version = store.resource.storage_version
        api_version = f"{GROUP}/{version.name}"
        status = {
            "observedGeneration": generation,
            "typeChecking": {"expressionWarnings": warnings} if warnings else {},
        }

        def with_status(current: Object) -> Object:
            if current["metadata"].get("generation", 1) != generation:
                return current
            # kube's controller applies the status as its own field manager, forcing
            # (pkg/controller/validatingadmissionpolicystatus/controller.go: ApplyStatus, Force)
            applied = {
                "apiVersion": api_version,
                "kind": store.resource.kind,
                "metadata": {"name": name},
                "status": status,
            }
            merged, _ = apply(
                current, applied, version.schema, STATUS_MANAGER,
                api_version=api_version, force=True, now=now_rfc3339(),
                kind=store.resource.kind, subresource="status", ignored_fields=("spec",),
            )  # fmt: skip
            return merged

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
        denied: list[tuple[str, str | None, Failure]] = []
        audited: list[dict[str, Any]] = []
        for binding_name in sorted(self.bindings.objects):
            binding = self.bindings.objects[binding_name]
            spec = binding.get("spec") or {}
            policy = self.policies.objects.get(str(spec.get("policyName")))
            if policy is None:
                continue
            policy_name = policy["metadata"]["name"]
            try:
                matched = await self._selected(policy, binding, attributes)
                if matched is None:
                    continue
                all_params = await self._params(policy, binding, attributes)
            except ConfigurationError as error:
                if _fails_closed(policy):
                    denied.append((policy_name, error.binding, Failure(0, str(error), "")))
                continue
            compiled = self.compiled_policy(policy)
            failures = await self._failures(compiled, policy, attributes, matched, all_params)
            actions = spec.get("validationActions") or []
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
    ) -> Matched | None:
        """The resource and version the policy sees the write in, when the policy's matchConstraints and
        the binding's matchResources (when it has them; unset resourceRules there narrow nothing) both
        select it (kube's DefinitionMatches and BindingMatches, policy/generic/policy_matcher.go)."""
        constraints = (policy.get("spec") or {}).get("matchConstraints")
        if not isinstance(constraints, dict):
            raise ConfigurationError(
                "policy contained no match constraints, a required field", None
            )
        try:
            matched = await self.matcher.matches(constraints, attributes)
        except errors.APIError as error:
            raise ConfigurationError(error.message, None) from None
        resources = (binding.get("spec") or {}).get("matchResources")
        if matched is None or not isinstance(resources, dict):
            return matched
        try:
            bound = await self.matcher.matches(resources, attributes)
        except errors.APIError as error:
            raise ConfigurationError(error.message, binding["metadata"]["name"]) from None
        return matched if bound is not None else None

    async def _failures(
        self, compiled: CompiledPolicy | str, policy: Object, attributes: Attributes,
        matched: Matched, all_params: list[Object | None],
    ) -> list[Failure]:  # fmt: skip
        """The validations that fail for this binding (each of its params), evaluation errors included
        under failurePolicy Fail."""
        fails_closed = _fails_closed(policy)
        if isinstance(compiled, str):
            return [Failure(0, compiled, "")] if fails_closed else []
        resource = attributes.resource
        variables = await self.admission_variables(
            compiled.needed,
            attributes,
            matched,
            matched.view(attributes.obj, resource, None, copy=False),
            matched.view(attributes.old, resource, None, copy=False),
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
        self, needed: Mapping[str, Any], attributes: Attributes, matched: Matched,
        obj: Object | None, old: Object | None,
    ) -> dict[str, Any]:  # fmt: skip
        """The admission variables a policy's expressions read (``needed``): the objects (in the
        resource and version the policy sees), and the request, namespace and authorizer when read."""
        variables = {"object": obj, "oldObject": old}
        if "request" in needed:
            variables["request"] = cel_request(attributes, matched)
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
        """The params each evaluation sees: [None] without a paramKind or a paramRef; the object
        paramRef names or the objects its selector matches; none found is a configuration error with
        parameterNotFoundAction Deny and no evaluation with Allow (kube's CollectParams,
        policy/generic/policy_dispatcher.go)."""
        kind = (policy.get("spec") or {}).get("paramKind")
        ref = (binding.get("spec") or {}).get("paramRef")
        if not kind or not isinstance(ref, dict):
            return [None]
        binding_name = binding["metadata"]["name"]
        store = self._param_store(kind, binding_name)
        namespace: str | None = None
        if store.resource.namespaced:
            namespace = str(ref.get("namespace") or attributes.namespace)
            if not namespace:
                raise ConfigurationError(
                    "cannot use namespaced paramRef in policy binding that matches cluster-scoped "
                    "resources",
                    binding_name,
                )
        elif ref.get("namespace"):
            raise ConfigurationError(
                "paramRef.namespace must not be provided for a cluster-scoped `paramKind`",
                binding_name,
            )
        found: list[Object | None] = []
        if ref.get("name"):
            try:  # read-only (the cache's own object): expressions never change their params
                found.append((await store.get_rendered(namespace, str(ref["name"])))[0])
            except errors.APIError as error:
                if error.code != 404:
                    raise ConfigurationError(error.message, binding_name) from None
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
                "no params found for policy binding with `Deny` parameterNotFoundAction",
                binding_name,
            )
        return found

    def _param_store(self, kind: Any, binding: str) -> Store:
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
            f"Kind={kind.get('kind')}'",
            binding,
        )

    @staticmethod
    def _denial(
        attributes: Attributes, policy: str, binding: str | None, failure: Failure
    ) -> errors.APIError:
        """kube's admission.NewForbidden with the validation's reason (Invalid by default) and its code."""
        bound = f" with binding '{binding}'" if binding is not None else ""
        message = f"ValidatingAdmissionPolicy '{policy}'{bound} denied request: {failure.message}"
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


def _fails_closed(policy: Object) -> bool:
    return bool((policy.get("spec") or {}).get("failurePolicy", "Fail") != "Ignore")


def cel_request(attributes: Attributes, matched: Matched) -> dict[str, Any]:
    """The ``request`` variable: the AdmissionRequest without its objects (kube's CreateAdmissionRequest
    leaves them to ``object`` and ``oldObject``)."""
    request: dict[str, Any] = admission_review(attributes, matched, None, None)["request"]
    del request["object"], request["oldObject"]
    return request


def validating_policies(context: WantsParts) -> ValidatingPolicies:
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
