"""The base class of every generated pydantic model: Kubernetes wire names in and out.

Models accept both the camelCase wire names and the snake_case attribute names, always serialize by alias
(so ``model_dump()`` is the wire form), and defer building validators until first use, which keeps server
start-up fast when many kinds are generated.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ResourceModel(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        defer_build=True,
        extra="ignore",
    )
