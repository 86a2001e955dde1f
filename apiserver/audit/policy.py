"""What to record of a request (kube's audit policy evaluator): a level and the stages to leave out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from apiserver.audit.event import Level, Stage
from apiserver.authorization.authorizer import Attributes


@dataclass(frozen=True, slots=True)
class AuditConfig:
    level: Level
    omit_stages: frozenset[Stage] = frozenset()


class Policy(Protocol):
    def evaluate(self, attributes: Attributes) -> AuditConfig:
        """How to audit the request ``attributes`` describe (kube's PolicyRuleEvaluator)."""
        ...


class MetadataPolicy:
    """Every request at the Metadata level, every stage: what `--audit-log-path` records without a policy
    file (kube-apiserver records nothing then; a policy file is a later option)."""

    CONFIG = AuditConfig(Level.METADATA)

    def evaluate(self, attributes: Attributes) -> AuditConfig:
        return self.CONFIG
