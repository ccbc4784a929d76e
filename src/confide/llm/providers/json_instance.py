"""A minimal JSON value that satisfies a JSON schema, for the `mock/json` model.

Covers what pydantic and hand-written agent schemas use: `$ref` into `$defs` /
`definitions`, `const`, `enum`, `default`, `examples`, `allOf` (merged), `anyOf` /
`oneOf` (first branch), type lists (first type), objects (required properties only),
arrays (`minItems`, `prefixItems`), strings (`minLength` and common formats), numbers
(bounds, exclusive bounds, `multipleOf`), booleans and null. A `pattern` cannot be
satisfied in general and is ignored unless the schema gives a default or an example.
"""

from __future__ import annotations

import math
from typing import Any

from confide.llm.errors import ModelSpecError

_MAX_DEPTH = 32
_FORMATS = {
    "date": "2000-01-01",
    "date-time": "2000-01-01T00:00:00Z",
    "time": "00:00:00",
    "email": "a@example.com",
    "uri": "https://example.com",
    "uuid": "00000000-0000-0000-0000-000000000000",
}


def minimal_instance(schema: dict[str, Any]) -> Any:
    """The simplest value valid against `schema`."""
    return _instance(schema, schema, 0)


def _resolve(ref: str, root: dict[str, Any]) -> dict[str, Any]:
    if not ref.startswith("#/"):
        raise ModelSpecError(f"unsupported $ref {ref!r}: only local refs (#/...) are resolved")
    node: Any = root
    for part in ref[2:].split("/"):
        key = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or key not in node:
            raise ModelSpecError(f"$ref {ref!r} does not resolve in the schema")
        node = node[key]
    if not isinstance(node, dict):
        raise ModelSpecError(f"$ref {ref!r} does not point to a schema object")
    return node


def _merge(parts: list[dict[str, Any]], root: dict[str, Any]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for part in parts:
        part = _resolve(part["$ref"], root) if "$ref" in part else part
        for key, value in part.items():
            if key == "properties":
                merged.setdefault("properties", {}).update(value)
            elif key == "required":
                merged["required"] = [*merged.get("required", []), *value]
            else:
                merged.setdefault(key, value)
    return merged


def _instance(schema: dict[str, Any], root: dict[str, Any], depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise ModelSpecError("schema nests required values deeper than 32 levels")
    if "$ref" in schema:
        return _instance(_resolve(schema["$ref"], root), root, depth + 1)
    for key in ("const", "default"):
        if key in schema:
            return schema[key]
    if schema.get("enum"):
        return schema["enum"][0]
    if schema.get("examples"):
        return schema["examples"][0]
    if "allOf" in schema:
        rest = {k: v for k, v in schema.items() if k != "allOf"}
        return _instance(_merge([*schema["allOf"], rest], root), root, depth + 1)
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return _instance(schema[key][0], root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = kind[0] if kind else None
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else "null"
    return _typed(kind, schema, root, depth)


def _typed(kind: str, schema: dict[str, Any], root: dict[str, Any], depth: int) -> Any:
    if kind == "object":
        properties = schema.get("properties", {})
        return {
            name: _instance(properties.get(name, {}), root, depth + 1)
            for name in schema.get("required", [])
        }
    if kind == "array":
        prefix = [_instance(s, root, depth + 1) for s in schema.get("prefixItems", [])]
        missing = max(0, schema.get("minItems", 0) - len(prefix))
        item = schema.get("items")
        if missing and isinstance(item, dict):
            prefix += [_instance(item, root, depth + 1) for _ in range(missing)]
        return prefix
    if kind == "string":
        if schema.get("format") in _FORMATS:
            return _FORMATS[schema["format"]]
        return "a" * schema.get("minLength", 0)
    if kind in ("integer", "number"):
        return _number(schema, integer=kind == "integer")
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    raise ModelSpecError(f"unsupported JSON schema type {kind!r}")


def _number(schema: dict[str, Any], *, integer: bool) -> int | float:
    """The first of 0, the bounds, just inside the bounds, and their midpoint (each
    rounded to `multipleOf`) that satisfies every bound."""
    lo = schema.get("minimum", schema.get("exclusiveMinimum"))
    hi = schema.get("maximum", schema.get("exclusiveMaximum"))
    step = schema.get("multipleOf", 1)

    def valid(v: float) -> bool:
        return (
            ("minimum" not in schema or v >= schema["minimum"])
            and ("exclusiveMinimum" not in schema or v > schema["exclusiveMinimum"])
            and ("maximum" not in schema or v <= schema["maximum"])
            and ("exclusiveMaximum" not in schema or v < schema["exclusiveMaximum"])
        )

    candidates: list[float] = [0]
    if lo is not None:
        candidates += [math.ceil(lo / step) * step, (math.floor(lo / step) + 1) * step]
    if hi is not None:
        candidates += [math.floor(hi / step) * step, (math.ceil(hi / step) - 1) * step]
    if lo is not None and hi is not None and not integer and "multipleOf" not in schema:
        candidates.append((lo + hi) / 2)
    for value in candidates:
        if valid(value) and (not integer or float(value).is_integer()):
            return int(value) if integer else float(value)
    raise ModelSpecError(f"no {'integer' if integer else 'number'} satisfies the bounds {schema}")
