"""Who may call the gateway: API keys for the JSON APIs, SigV4 for the Converse API.

- Messages and Chat Completions clients send a key. The current Anthropic SDK sends only
  ``Authorization: Bearer <key>`` while older clients and curl examples use ``x-api-key``,
  so both are read; OpenAI clients send Bearer. Keys are compared in constant time.
- boto3 signs every request with SigV4. When AWS credentials are configured the signature
  is *verified*: the canonical request is rebuilt from what actually arrived (raw path as
  sent, signed headers only, the body) and signed again with botocore's own ``SigV4Auth``,
  so the gateway and the client cannot disagree on canonicalisation details (e.g. the model
  id's ``%3A`` being encoded a second time in the canonical path). Without configured
  credentials any signature is accepted, as a local gateway needs no AWS account.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Final

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from ..errors import ErrorKind, GatewayError

__all__ = ["check_api_key", "extract_api_key", "verify_sigv4"]

#: How far a request's ``X-Amz-Date`` may be from the gateway's clock (AWS uses 15 minutes).
MAX_CLOCK_SKEW_SECONDS: Final = 15 * 60

_AUTH_RE: Final = re.compile(
    r"^AWS4-HMAC-SHA256\s+Credential=(?P<credential>[^,\s]+)\s*,\s*"
    r"SignedHeaders=(?P<signed>[^,\s]+)\s*,\s*Signature=(?P<signature>[0-9a-fA-F]+)\s*$"
)


def extract_api_key(headers: Mapping[str, str]) -> str | None:
    """The key from ``x-api-key`` or ``Authorization: Bearer`` (whichever is present)."""
    key = headers.get("x-api-key")
    if key:
        return key.strip()
    auth = headers.get("authorization", "")
    scheme, _, value = auth.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return None


def check_api_key(headers: Mapping[str, str], keys: Iterable[str] | None) -> None:
    """Raise a 401-kind error unless no keys are configured or a configured key was sent."""
    allowed = list(keys or ())
    if not allowed:
        return
    sent = extract_api_key(headers)
    if sent is None:
        raise GatewayError(
            "missing API key: send it as 'x-api-key: <key>' or 'Authorization: Bearer <key>'",
            "authentication",
        )
    ok = False
    for key in allowed:  # no early exit: timing does not tell which key was close
        ok |= hmac.compare_digest(sent.encode(), key.encode())
    if not ok:
        raise GatewayError("invalid API key", "authentication")


def _denied(message: str, code: str) -> GatewayError:
    kind: ErrorKind = "authentication" if code == "UnrecognizedClientException" else "permission"
    return GatewayError(message, kind, aws_code=code)


def verify_sigv4(
    *,
    method: str,
    scheme: str,
    raw_path: bytes,
    query_string: bytes,
    headers: Iterable[tuple[bytes, bytes]],
    body: bytes,
    credentials: Mapping[str, str],
    now: datetime | None = None,
) -> str:
    """Check a SigV4-signed request against ``credentials`` (access key id → secret).

    Returns the access key id on success; raises a 403-kind :class:`GatewayError` whose
    ``aws_code`` is the exception AWS itself would name.
    """
    header_list = [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in headers]
    by_name: dict[str, list[str]] = {}
    for name, value in header_list:
        by_name.setdefault(name, []).append(value)
    auth = ", ".join(by_name.get("authorization", []))
    if not auth:
        raise _denied("Missing Authentication Token", "MissingAuthenticationTokenException")
    match = _AUTH_RE.match(auth)
    if match is None:
        raise _denied(
            "Authorization header is not a valid AWS4-HMAC-SHA256 signature",
            "IncompleteSignatureException",
        )
    parts = match["credential"].split("/")
    if len(parts) != 5 or parts[4] != "aws4_request":
        raise _denied(
            "Credential should be scoped to a valid date, region and service",
            "IncompleteSignatureException",
        )
    access_key, scope_date, region, service, _ = parts
    secret = credentials.get(access_key)
    if secret is None:
        raise _denied(
            "The security token included in the request is invalid.",
            "UnrecognizedClientException",
        )
    amz_date = (by_name.get("x-amz-date") or [""])[0]
    try:
        signed_at = datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError:
        raise _denied("missing or malformed X-Amz-Date header", "IncompleteSignatureException") from None
    if amz_date[:8] != scope_date:
        raise _denied("credential scope date does not match X-Amz-Date", "InvalidSignatureException")
    current = now or datetime.now(UTC)
    if abs((current - signed_at).total_seconds()) > MAX_CLOCK_SKEW_SECONDS:
        raise _denied(
            f"Signature expired: {amz_date} is more than 15 minutes from the server time",
            "InvalidSignatureException",
        )

    signed_names = match["signed"].lower().split(";")
    if "host" not in signed_names:
        raise _denied("the host header must be signed", "IncompleteSignatureException")
    missing = [n for n in signed_names if n not in by_name]
    if missing:
        raise _denied(f"signed header(s) not sent: {', '.join(missing)}", "InvalidSignatureException")
    claimed = by_name.get("x-amz-content-sha256")
    claimed_hash = claimed[0] if claimed else None
    if claimed_hash is not None and claimed_hash != hashlib.sha256(body).hexdigest():
        raise _denied("x-amz-content-sha256 does not match the body", "InvalidSignatureException")

    signed_headers = {name: ",".join(by_name[name]) for name in signed_names}
    host = signed_headers["host"]
    url = f"{scheme}://{host}{raw_path.decode('latin-1')}"
    if query_string:
        url += "?" + query_string.decode("latin-1")
    request = AWSRequest(method=method, url=url, headers=signed_headers, data=body)
    request.context["timestamp"] = amz_date
    signer = SigV4Auth(Credentials(access_key, secret), service, region)
    to_sign = signer.headers_to_sign(request)
    if sorted(set(to_sign)) != sorted(set(signed_names)):
        raise _denied("signed headers cannot be verified", "InvalidSignatureException")
    canonical = signer.canonical_request(request)
    expected = signer.signature(signer.string_to_sign(request, canonical), request)
    if not hmac.compare_digest(expected, match["signature"].lower()):
        raise _denied(
            "The request signature we calculated does not match the signature you provided.",
            "InvalidSignatureException",
        )
    return access_key
