"""A request's headers, decoded on demand, read as the dict they replaced read: Latin-1 values, the last of a
repeated header winning, a default for one absent."""

from __future__ import annotations

from apiserver.endpoints.http import Headers


def test_lookups_iteration_and_repeats() -> None:
    headers = Headers(
        [
            (b"accept", b"application/json"),
            (b"x-name", b"caf\xe9"),
            (b"accept", b"application/yaml"),
        ]
    )
    assert headers.get("accept") == "application/yaml"
    assert headers["x-name"] == "café"
    assert headers.get("content-type", "") == ""
    assert "x-name" in headers and "content-type" not in headers
    assert dict(headers) == {"accept": "application/yaml", "x-name": "café"}
    assert len(headers) == 2
