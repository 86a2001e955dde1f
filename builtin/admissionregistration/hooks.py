"""In-process admission hooks: Python functions a definition names (``admissionHooks:``) that judge the
writes of its kind inside the server, with a webhook's attributes (operations, failurePolicy,
timeoutSeconds, namespaceSelector, objectSelector, matchConditions, reinvocationPolicy) and its protocol
without the HTTP: the function gets the AdmissionReview's ``request`` (a dict) and returns the
``response``'s fields (``allowed``, ``status``, ``patch`` as a list of JSONPatch operations, ``warnings``,
``auditAnnotations``). An ``async def`` function runs on the event loop; a plain one on a worker thread, so
a slow hook does not hold the loop. Answers and failures are worded as a webhook's."""

from __future__ import annotations

import asyncio
import base64
import inspect
from collections.abc import Callable
from typing import Any

import orjson

from apiserver.admission.interface import Plugin
from builtin.admissionregistration.webhook import MutatingWebhooks, ValidatingWebhooks, Webhooks
from builtin.wants import WantsStores
from builtin.webhook.client import CallFailed

Hook = Callable[[dict[str, Any]], Any]


class _InProcess(Webhooks):
    """One hook of a definition (a fixed configuration: no informer)."""

    def __init__(self, context: WantsStores, config: dict[str, Any], function: Hook) -> None:
        super().__init__(context)
        self.hooks = [config]
        self.function = function

    async def send(self, hook: dict[str, Any], review: dict[str, Any], timeout: int) -> Any:
        request = review["request"]
        try:
            if inspect.iscoroutinefunction(self.function):
                answer = await asyncio.wait_for(self.function(request), timeout)
            else:
                answer = await asyncio.wait_for(asyncio.to_thread(self.function, request), timeout)
        except TimeoutError:
            raise CallFailed("context deadline exceeded") from None
        except Exception as error:  # the hook's own failure, under its failurePolicy
            raise CallFailed(f"the hook raised {type(error).__name__}: {error}") from None
        if not isinstance(answer, dict):
            raise CallFailed(f"the hook returned {type(answer).__name__}, expected a dict")
        response = {"uid": request["uid"], **answer}
        if isinstance(response.get("patch"), list):  # the webhook protocol's base64 JSON
            response["patch"] = base64.b64encode(orjson.dumps(response["patch"])).decode()
            response.setdefault("patchType", "JSONPatch")
        return {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "response": response,
        }


class ValidatingHook(_InProcess, ValidatingWebhooks):
    pass


class MutatingHook(_InProcess, MutatingWebhooks):
    pass


def python_hook(config: dict[str, Any], function: Hook) -> Callable[[WantsStores], Plugin]:
    """The admission plugin factory of one ``admissionHooks`` entry (the generated REST bindings call
    this with the entry, its rules filled in, and the function)."""
    kind = MutatingHook if config.get("type") == "Mutating" else ValidatingHook
    return lambda context: kind(context, config, function)
