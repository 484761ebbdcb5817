"""Schema replies of the stand-in server: a request that constrains its reply to a JSON schema
(OpenAI `response_format` / `guided_json`, Ollama `format`) is answered with a small instance of that
schema, as a server with constrained decoding would return some valid object.

With `schema_replies=True` on the stand-in (`--schema-replies` on its command line), judge-based
analyses (rubric grades, MAPLE step labels, tutoring scores) run end to end against it. The values
are the simplest the schema allows (the first enum value, a number's lower bound, the shortest
lists), so the figures made from them are not meaningful; what they exercise is every stage.
"""

from __future__ import annotations

from typing import Any

MAX_DEPTH = 32


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part, {}) if isinstance(node, dict) else {}
        return {**node, **{k: v for k, v in schema.items() if k != "$ref"}} if isinstance(node, dict) else {}
    return schema


def instance(schema: dict[str, Any], root: dict[str, Any] | None = None, depth: int = 0) -> Any:
    """A small value that satisfies `schema` (the JSON-schema subset pydantic writes).

    >>> instance({"type": "object", "properties": {"n": {"type": "integer", "minimum": 2},
    ...           "tag": {"enum": ["a", "b"]}}, "required": ["n", "tag"]})
    {'n': 2, 'tag': 'a'}
    """
    root = root if root is not None else schema
    if depth > MAX_DEPTH:
        return None
    schema = _resolve(schema, root)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        options = [o for o in schema.get(key, []) if isinstance(o, dict)]
        if options:
            usable = [o for o in options if _resolve(o, root).get("type") != "null"] or options
            return instance(usable[0], root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        return {k: instance(v, root, depth + 1) for k, v in props.items() if k in schema.get("required", props)}
    if kind == "array":
        n = int(schema.get("minItems", 0))
        items = schema.get("items", {})
        return [instance(items, root, depth + 1) for _ in range(n)] if isinstance(items, dict) else []
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        value = low if low is not None else 0
        if "exclusiveMinimum" in schema and "minimum" not in schema:
            value = value + 1 if kind == "integer" else value + 0.5
        high = schema.get("maximum")
        if high is not None and value > high:
            value = high
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return False
    if kind == "string":
        return "x" * max(1, int(schema.get("minLength", 1)))
    return None


def requested_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a chat request constrains its reply to, if any."""
    fmt = body.get("response_format")
    if isinstance(fmt, dict):
        inner = fmt.get("json_schema")
        if isinstance(inner, dict) and isinstance(inner.get("schema"), dict):
            return inner["schema"]
        if isinstance(fmt.get("schema"), dict):
            return fmt["schema"]
    for key in ("guided_json", "format"):
        if isinstance(body.get(key), dict):
            return body[key]
    return None
