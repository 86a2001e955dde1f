"""Fixtures of the field manager tests (helpers live in fm_support, schemas in fm_schemas)."""

from __future__ import annotations

from typing import Any

import pytest
from fm_support import crontab_schema_dict, deployment_schema_dict


@pytest.fixture
def deployment_schema() -> dict[str, Any]:
    return deployment_schema_dict()


@pytest.fixture
def crontab_schema() -> dict[str, Any]:
    return crontab_schema_dict()
