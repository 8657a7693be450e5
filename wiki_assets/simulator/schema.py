"""Structured output: a deterministic JSON value that validates against a requested schema."""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from typing import Any

__all__ = ["SchemaFiller"]

# Words for schema strings when the document has none (an empty user message).
_FALLBACK_WORDS = ("lorem", "ipsum", "dolor", "sit", "amet")


class SchemaFiller:
    """Builds a deterministic value that validates against a JSON schema (the pydantic subset).

    Strings are made of words from the document, so a test can see the document reached the
    model; enums are picked by a checksum of the document so different documents differ.
    """

    def __init__(self, root: dict[str, Any], text: str) -> None:
        self._root = root
        self._words = text.split() or list(_FALLBACK_WORDS)
        self._cursor = 0
        self._seed = zlib.crc32(text.encode("utf-8"))

    def _resolve(self, schema: Any) -> dict[str, Any]:
        """``schema`` with local ``$ref``s (``#/...``, up to 32 in a chain) replaced by targets."""
        seen = 0
        while isinstance(schema, dict) and "$ref" in schema and seen < 32:
            ref = schema["$ref"]
            target: Any = None
            if isinstance(ref, str) and ref.startswith("#/"):
                target = self._root
                for part in ref[2:].split("/"):
                    target = target.get(part) if isinstance(target, dict) else None
            if not isinstance(target, dict):
                raise ValueError(f"unresolvable $ref {ref!r}")
            # Keywords next to a $ref (a description, a default) apply alongside the target.
            schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
            seen += 1
        return schema if isinstance(schema, dict) else {}

    def _take_words(self, count: int) -> str:
        words = [self._words[(self._cursor + i) % len(self._words)] for i in range(count)]
        self._cursor += count
        return " ".join(words)

    def _pick(self, options: Sequence[Any]) -> Any:
        choice = options[(self._seed + self._cursor) % len(options)]
        self._cursor += 1
        return choice

    def value(self, schema: Any, depth: int = 0) -> Any:
        """A value valid for ``schema``, ``depth`` levels below the root (bounds recursion)."""
        schema = self._resolve(schema)
        if "const" in schema:
            return schema["const"]
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return self._pick(schema["enum"])
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                options = [self._resolve(option) for option in schema[key]]
                useful = [option for option in options if option.get("type") != "null"]
                return self.value(useful[0], depth) if useful else None
        if isinstance(schema.get("allOf"), list):
            merged: dict[str, Any] = {}
            for part in schema["allOf"]:
                merged.update(self._resolve(part))
            merged.update({k: v for k, v in schema.items() if k != "allOf"})
            return self.value(merged, depth)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind is None:
            kind = "object" if "properties" in schema else "array" if "items" in schema else ""
        if kind == "object":
            return self._object(schema, depth)
        if kind == "array":
            return self._array(schema, depth)
        if kind == "integer":
            return int(self._number(schema, integer=True))
        if kind == "number":
            return self._number(schema, integer=False)
        if kind == "boolean":
            return True
        if kind == "null":
            return None
        return self._string(schema)

    def _object(self, schema: dict[str, Any], depth: int) -> dict[str, Any]:
        properties = schema.get("properties")
        if not isinstance(properties, dict):
            return {}
        required = schema.get("required")
        names = required if isinstance(required, list) and required else list(properties)
        return {name: self.value(properties.get(name, {}), depth + 1) for name in names}

    def _array(self, schema: dict[str, Any], depth: int) -> list[Any]:
        low = int(schema.get("minItems", 0))
        high = int(schema.get("maxItems", max(low, 3)))
        items = self._resolve(schema.get("items", {}))
        enum = items.get("enum")
        if isinstance(enum, list) and enum:
            # Distinct enum members (a "tags" list), as many as allowed up to three.
            count = max(low, min(high, 3, len(enum)))
            start = (self._seed + self._cursor) % len(enum)
            self._cursor += 1
            return [enum[(start + i) % len(enum)] for i in range(count)]
        # Deep or recursive schemas stop growing at the minimum so generation terminates.
        count = low if depth > 6 else max(low, min(high, 2))
        return [self.value(items, depth + 1) for _ in range(count)]

    @staticmethod
    def _number(schema: dict[str, Any], integer: bool) -> float:
        step = 1 if integer else 0.5
        low = schema.get("minimum")
        if low is None and schema.get("exclusiveMinimum") is not None:
            low = schema["exclusiveMinimum"] + step
        high = schema.get("maximum")
        if high is None and schema.get("exclusiveMaximum") is not None:
            high = schema["exclusiveMaximum"] - step
        if low is not None and high is not None:
            value = (low + high) / 2
        elif low is not None:
            value = low
        elif high is not None:
            value = min(high, step)
        else:
            value = step
        return math.floor(value) if integer else float(value)

    def _string(self, schema: dict[str, Any]) -> str:
        fmt = schema.get("format")
        if fmt == "date":
            return "2024-01-01"
        if fmt == "date-time":
            return "2024-01-01T00:00:00Z"
        if fmt == "email":
            return "sim@example.com"
        if fmt in ("uri", "url"):
            return "https://example.com/sim"
        text = self._take_words(6)
        min_length = int(schema.get("minLength", 0))
        while len(text) < min_length:
            text = f"{text} {self._take_words(6)}"
        max_length = schema.get("maxLength")
        if isinstance(max_length, int):
            text = text[:max_length].rstrip() or text[:max_length]
        return text
