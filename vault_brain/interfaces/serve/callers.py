"""Who is calling `vb serve`, and what it may do: the grant (`domain.policy.grants`) each request
carries, from its bearer token.

- `--session-only ID` (the sandbox's server): every request has that session's grant,
  whatever it brings; no token is asked (the socket is the sandbox's alone).
- No VB_SERVE_TOKEN and no stored token (`vb token add`) on a loopback address or a unix
  socket: every request may do everything, as before tokens carried scopes.
- Else a request must bring a token: VB_SERVE_TOKEN may do everything; a stored token
  what it grants; none or an unknown one is refused (401). A token store vb cannot trust
  refuses every stored token (503), never lets a request through.
"""

from __future__ import annotations

import hmac

from starlette.requests import Request
from starlette.responses import Response

from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.policy.grants import FULL, Grant
from vault_brain.interfaces.serve.relay import bearer_token, error_response
from vault_brain.storage.policy.token_store import TokenStore


class Callers:
    def __init__(
        self,
        tokens: TokenStore,
        token: str | None = None,
        fixed: Grant | None = None,
        require_token: bool = False,
    ) -> None:
        self.tokens = tokens
        self.token = token
        """VB_SERVE_TOKEN."""
        self.fixed = fixed
        """The grant of every request (`--session-only`)."""
        self.require_token = require_token
        """Refuse requests without a token even when no token exists (not on loopback)."""

    def tokens_required(self) -> bool:
        """Requests must bring a token (so a client's Authorization is vb's, not a key)."""
        if self.fixed is not None:
            return True  # (never asked, and never forwarded)
        return self.token is not None or self.require_token or self.tokens.has_tokens()

    def grant(self, request: Request) -> Grant | None:
        """What the request may do (None: no token, or an unknown one)."""
        if self.fixed is not None:
            return self.fixed
        if not self.tokens_required():
            return FULL
        given = bearer_token(request.headers.get("authorization"))  # (scheme in any case)
        if given is None:
            return None
        if self.token is not None and hmac.compare_digest(given.encode(), self.token.encode()):
            return FULL
        stored = self.tokens.lookup(given)
        return stored.grant() if stored is not None else None

    def denied(self, request: Request) -> Response | None:
        """None when the request may go on (its grant in `request.state.grant`), else the
        refusal: 401 for a missing or unknown token, 503 when the token store cannot be
        trusted."""
        try:
            grant = self.grant(request)
        except VaultBrainError as exc:
            return error_response(503, "tokens_unreadable", exc.message, exc.hint)
        if grant is not None:
            request.state.grant = grant
            return None
        return error_response(
            401,
            "unauthorized",
            "this vb serve needs a token (VB_SERVE_TOKEN, or one made by `vb token add`)",
            "send `Authorization: Bearer <token>` (the API key of an OpenAI client)",
            {"www-authenticate": "Bearer"},
        )
