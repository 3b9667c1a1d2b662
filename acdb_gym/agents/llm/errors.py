"""Exceptions of the LLM agents."""

from __future__ import annotations

__all__ = ["LLMProviderError"]


class LLMProviderError(RuntimeError):
    """The model provider did not produce a reply: retries ran out, or it rejected the request.

    ``LLMAgent.act`` raises it; the sweep records the job as failed so that a later run retries
    it. The message never contains the API key.

    Attributes:
        provider: ``"openai"`` or ``"anthropic"``.
        model: the model name.
        status_code: the last HTTP status, or None for timeouts and connection errors.
        attempts: HTTP attempts made for the failing call.
        transient: the last failure was of a retryable kind (rate limit, server error,
            timeout, dropped connection); False for a rejected request (bad key, bad
            request, unknown model).
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        model: str,
        status_code: int | None,
        attempts: int,
        transient: bool,
    ) -> None:
        super().__init__(message)
        self.provider = provider
        self.model = model
        self.status_code = status_code
        self.attempts = attempts
        self.transient = transient
