"""The rules of the webhook configurations that their schema cannot say (kube's
ValidateValidatingWebhookConfiguration / ValidateMutatingWebhookConfiguration, in its words): unique webhook
names of three DNS segments or more, exactly one of ``url`` or ``service`` (an https URL without user
information, query or fragment), an
admissionReviewVersions list this server speaks (v1) and match conditions that compile."""

from __future__ import annotations

from typing import Any, ClassVar

from apiserver.machinery.names import is_dns1123_subdomain
from apiserver.machinery.objects import Object
from apiserver.registry.strategy import Strategy
from apiserver.schema import Cause, causes
from apiserver.schema.webhookurl import webhook_url_causes
from builtin.admissionregistration.celenv import WEBHOOK_VARIABLES, Environment

REVIEW_VERSIONS = ("v1", "v1beta1")


def _client_config(config: Any, path: str) -> list[Cause]:
    if not isinstance(config, dict):
        return [causes.required(path, "exactly one of url or service is required")]
    url, service = config.get("url"), config.get("service")
    if (url is None) == (service is None):
        return [causes.required(path, "exactly one of url or service is required")]
    if url is None:
        return []
    return webhook_url_causes(f"{path}.url", str(url))


def _review_versions(versions: Any, path: str) -> list[Cause]:
    if not versions:
        return [causes.required(path, "must specify one of v1, v1beta1")]
    if not any(v in REVIEW_VERSIONS for v in versions):
        return [causes.invalid(path, versions, "must include at least one of v1, v1beta1")]
    return []


def _conditions(conditions: Any, path: str) -> list[Cause]:
    found: list[Cause] = []
    for index, condition in enumerate(conditions or ()):
        expression = str(condition.get("expression", ""))
        failure = Environment(WEBHOOK_VARIABLES).compile_failure(expression)
        if failure is not None:
            found.append(
                causes.invalid(
                    f"{path}[{index}].expression", expression, f"compilation failed: {failure}"
                )
            )
    return found


def webhook_causes(obj: Object) -> list[Cause]:
    found: list[Cause] = []
    seen: set[str] = set()
    for index, hook in enumerate(obj.get("webhooks") or ()):
        path = f"webhooks[{index}]"
        name = str(hook.get("name", ""))
        if name in seen:
            found.append(causes.duplicate(f"{path}.name", name))
        seen.add(name)
        problems = is_dns1123_subdomain(name)
        if not problems and name.count(".") < 2:
            problems = ["should be a domain with at least three segments separated by dots"]
        found.extend(causes.invalid(f"{path}.name", name, p) for p in problems)
        found.extend(_client_config(hook.get("clientConfig"), f"{path}.clientConfig"))
        found.extend(
            _review_versions(hook.get("admissionReviewVersions"), f"{path}.admissionReviewVersions")
        )
        found.extend(_conditions(hook.get("matchConditions"), f"{path}.matchConditions"))
    return found


class WebhookConfigurationStrategy(Strategy):
    # kube's strategies set generation 1 on create and bump it when the spec (the webhooks) changes
    sets_generation: ClassVar[bool | None] = True

    def validate(self, obj: Object) -> list[Cause]:
        return webhook_causes(obj)

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        return webhook_causes(obj)
