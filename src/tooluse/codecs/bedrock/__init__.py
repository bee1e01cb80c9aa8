"""AWS Bedrock Converse API <-> the neutral model (see :mod:`.requests`, which holds it all
for now; it is being split into smaller modules)."""

from __future__ import annotations

from .requests import ERROR_TYPES as ERROR_TYPES
from .requests import IMAGE_FORMATS as IMAGE_FORMATS
from .requests import TARGET as TARGET
from .requests import __all__ as __all__
from .requests import backend_error as backend_error
from .requests import decode_events as decode_events
from .requests import decode_request as decode_request
from .requests import decode_response as decode_response
from .requests import encode_events as encode_events
from .requests import encode_request as encode_request
from .requests import encode_response as encode_response
from .requests import error_body as error_body
