"""`apiforge serve`'s `--audit-*` flags (kube-apiserver's names and defaults): parsed into the chain's
AuditOptions, refused with kube's words (AuditLogOptions.Validate, the policy file's loading) as a usage
error before anything starts."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

import apiforge.cli
from apiserver.audit.options import AuditOptions
from apiserver.server.app import APIServer
from apiserver.server.chain import build_handler_chain
from apiserver.server.options import ChainOptions, ServeOptions
from apiserver.storage import MemoryStorage
from generated.server import OPENAPI_DIR, build_apis


def serve(*arguments: str) -> Result:
    return CliRunner().invoke(apiforge.cli.main, ["serve", *arguments])


def test_the_flags_reach_the_chain(served: list[ServeOptions], tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Metadata}]\n")
    flags = (
        f"--audit-policy-file={policy}",
        "--audit-log-path=-",
        "--audit-log-maxsize=5",
        "--audit-log-maxbackup=3",
        "--audit-log-maxage=7",
        "--audit-log-format=legacy",
        "--audit-log-truncate-enabled",
        "--audit-log-truncate-max-event-size=2048",
    )
    assert serve(*flags).exit_code == 0
    assert serve().exit_code == 0
    assert [options.chain.audit for options in served] == [
        AuditOptions(str(policy), 5, 3, 7, "legacy", True, 2048),
        AuditOptions("", 0, 0, 0, "json", False, 102400),  # kube's defaults
    ]
    help_text = serve("--help").output
    for flag in flags:
        assert flag.split("=")[0] in help_text


def test_bad_values_are_refused_in_kube_s_words(served: list[ServeOptions]) -> None:
    refused = serve(
        "--audit-log-path=audit.log",
        "--audit-log-format=xml",
        "--audit-log-maxage=-1",
        "--audit-log-maxbackup=-2",
        "--audit-log-maxsize=-3",
        "--audit-log-truncate-enabled",
        "--audit-log-truncate-max-event-size=0",
    )
    assert refused.exit_code == 2
    assert (
        "invalid audit truncate log max event size 0, must be a positive number; invalid audit log"
        ' format xml, allowed formats are "legacy,json"; --audit-log-maxage -1 can\'t be a negative'
        " number; --audit-log-maxbackup -2 can't be a negative number; --audit-log-maxsize -3 can't be"
        " a negative number"
    ) in " ".join(refused.output.split())
    assert served == []
    # the log's options are not checked without a log, as in kube
    assert serve("--audit-log-format=xml").exit_code == 0


def test_a_broken_policy_is_refused_even_without_a_log(
    served: list[ServeOptions], tmp_path: Path
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules: [{level: None}]\n")
    refused = serve(f"--audit-policy-file={policy}")
    assert refused.exit_code == 2
    assert (
        'loading audit policy file: failed decoding: no kind "Policy" is registered for version'
        f' "audit.k8s.io/v1beta1": from file {policy}'
    ) in " ".join(refused.output.split())
    assert ChainOptions(audit=AuditOptions(str(tmp_path / "none.yaml"))).validate() == [
        f'loading audit policy file: failed to read file path "{tmp_path / "none.yaml"}":'
        f" open {tmp_path / 'none.yaml'}: no such file or directory"
    ]


def test_a_policy_without_a_log_records_nothing(tmp_path: Path) -> None:
    """As kube: the policy chooses what a backend gets; without `--audit-log-path` there is none."""
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: RequestResponse}]\n"
    )
    server = APIServer(build_apis(), MemoryStorage(), OPENAPI_DIR)
    chain = build_handler_chain(server, ChainOptions(audit=AuditOptions(str(policy))))
    assert chain.auditor is None
    assert list(tmp_path.iterdir()) == [policy]
