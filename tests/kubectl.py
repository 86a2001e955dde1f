"""Run a real kubectl binary (a given minor version) against a test server, with its own cache directory."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apiserver.authentication.user import CREDENTIAL_ID


def kubectl_binary(minor: int) -> Path:
    """The versioned kubectl lying beside the gcloud dispatcher (kubectl.1.27 … kubectl.1.33)."""
    dispatcher = shutil.which("kubectl")
    if dispatcher is None:
        raise FileNotFoundError("kubectl is not installed")
    binary = Path(os.path.realpath(dispatcher)).parent / f"kubectl.1.{minor}"
    if not binary.exists():
        raise FileNotFoundError(binary)
    return binary


# kube's printEvent columns, -o wide (pkg/printers/internalversion/printers.go), for either group's events
EVENT_COLUMNS = [
    "LAST SEEN",
    "TYPE",
    "REASON",
    "OBJECT",
    "SUBOBJECT",
    "SOURCE",
    "MESSAGE",
    "FIRST SEEN",
    "COUNT",
    "NAME",
]


def cells(output: str) -> list[list[str]]:
    """kubectl's table cut at its header's column starts (headers and cells may hold single spaces; a cell
    may be empty)."""
    header, *lines = output.splitlines()
    starts = [match.start() for match in re.finditer(r"\S+(?: \S+)*", header)]
    bounds = list(zip(starts, [*starts[1:], None], strict=True))
    return [[line[start:end].strip() for start, end in bounds] for line in (header, *lines)]


@dataclass
class Kubectl:
    binary: Path
    kubeconfig: Path
    cache_dir: Path
    namespace: str = ""

    def _command(self, args: tuple[str, ...]) -> list[str]:
        scope = ["--namespace", self.namespace] if self.namespace else []
        connection = ["--kubeconfig", str(self.kubeconfig), "--cache-dir", str(self.cache_dir)]
        return [str(self.binary), *connection, *scope, *args]

    @property
    def _environment(self) -> dict[str, str]:
        return {**os.environ, "HOME": str(self.cache_dir)}  # no ~/.kube of the machine leaks in

    def run(
        self,
        *args: str,
        stdin: str | None = None,
        check: bool = True,
        timeout: float = 60,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            self._command(args),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**self._environment, **(env or {})},
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"kubectl {' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
            )
        return result

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self._command(args),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self._environment,
        )


def whoami(kubectl: Kubectl, *args: str) -> Any:
    """The userInfo of ``kubectl auth whoami`` (a SelfSubjectReview), ``args`` being more flags."""
    return json.loads(kubectl.run("auth", "whoami", "-o", "json", *args).stdout)["status"][
        "userInfo"
    ]


X509_CREDENTIAL = re.compile(r"X509SHA256=[0-9a-f]{64}")


def certificate_user(info: dict[str, Any]) -> dict[str, Any]:
    """``info`` of a client-certificate user less its credential-id extra, which must be kube's
    ``X509SHA256=<fingerprint>`` (the certificate's digest is checked in tests/unit/authentication)."""
    extra = dict(info.get("extra", {}))
    assert [X509_CREDENTIAL.fullmatch(v) is not None for v in extra.pop(CREDENTIAL_ID)] == [True]
    rest = {key: value for key, value in info.items() if key != "extra"}
    return {**rest, "extra": extra} if extra else rest
