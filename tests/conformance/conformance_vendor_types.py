"""Validation against the vendors' own installed definitions, strictly:

- the anthropic SDK's response types (pydantic models that keep unknown fields aside, in
  ``model_extra``): a value conforms when it validates *and* no model anywhere in it kept an
  extra field;
- botocore's service model of ``bedrock-runtime``: a JSON document conforms to an output
  shape when botocore's own ``ParamValidator`` finds nothing wrong with it (it refuses
  unknown members, missing required ones, wrong types, lengths and unions with no or two
  members set).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pydantic


def anthropic_errors(kind: Any, value: Any) -> list[str]:
    """Why ``value`` is not a strict ``kind`` (an anthropic SDK type); none when it is."""
    try:
        parsed = pydantic.TypeAdapter(kind).validate_python(value)
    except pydantic.ValidationError as exc:
        return [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()]
    return list(_extras(parsed, "(top)"))


def _extras(value: Any, path: str) -> Iterator[str]:
    if isinstance(value, pydantic.BaseModel):
        for name in value.model_extra or {}:
            yield f"{path}.{name}: not a field of {type(value).__name__}"
        for name in type(value).model_fields:
            yield from _extras(getattr(value, name), f"{path}.{name}")
    elif isinstance(value, (list, tuple)):
        for k, item in enumerate(value):
            yield from _extras(item, f"{path}.{k}")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _extras(item, f"{path}.{key}")


def anthropic_version() -> str:
    import anthropic

    return f"anthropic SDK {anthropic.__version__} types, extra fields refused"


def botocore_errors(shape: Any, value: Any) -> list[str]:
    """Why ``value`` is not a ``shape`` of a botocore service model; none when it is."""
    from botocore.validate import ParamValidator

    report = ParamValidator().validate(value, shape)
    return report.generate_report().splitlines() if report.has_errors() else []


def bedrock_model() -> tuple[Any, str]:
    """botocore's ``bedrock-runtime`` service model and its label."""
    import botocore
    import botocore.session

    model = botocore.session.get_session().get_service_model("bedrock-runtime")
    return model, (f"botocore {botocore.__version__} bedrock-runtime "
                   f"{model.metadata.get('apiVersion')} service model")
