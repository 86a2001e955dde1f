"""The seam where an aggregator sits in front of the server's own handlers (kube's CreateServerChain: the
aggregator first, delegating what it does not proxy): the server asks it, for every HTTP request, whether it
takes the request (a group-version served by another API server, or a document it merges with the server's
own), and if so hands it the request and the server's own handler, which it may call for the local part."""

from __future__ import annotations

from typing import Protocol

from apiserver.endpoints.http import ASGIApp, Receive, Scope, Send


class Aggregation(Protocol):
    def claims(self, path: str) -> bool:
        """Whether the request for ``path`` is the aggregator's; cheap, asked on every request."""
        ...

    async def serve(self, scope: Scope, receive: Receive, send: Send, local: ASGIApp) -> None:
        """Answer a claimed request; ``local`` serves it as if no aggregator were there."""
        ...
