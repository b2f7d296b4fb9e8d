"""The dead-endpoint circuit breaker of the ``openai:`` backend.

A mistyped or stopped server refuses every connection; without a breaker each item is retried
``max_retries`` times with backoff, so a 26,000-item run would spend hours failing. The breaker
watches the attempts made before the server ever answered: when the first
:data:`DEAD_ENDPOINT_ATTEMPTS` of them all failed to connect (refused, unresolvable host, connect
timeout), the run stops with one line naming the endpoint. Once any answer came back (even an
error status), the server is known to exist and the breaker stands down for the backend's
lifetime: later connection failures are ordinary retryable errors of their items.
"""

from __future__ import annotations

from medlens.core.errors import MedlensError

DEAD_ENDPOINT_ATTEMPTS = 5
"""Connection attempts, all failed and none answered, after which a run stops. With the default
backoff one request reaches it within about 4-8 s; concurrent requests reach it at once."""


class EndpointUnreachableError(MedlensError):
    """The server of an ``openai:`` spec could not be reached by any of the first attempts."""


class ConnectBreaker:
    """Counts failed connection attempts until the endpoint first answers."""

    def __init__(self, endpoint: str, limit: int = DEAD_ENDPOINT_ATTEMPTS) -> None:
        self.endpoint = endpoint
        self.limit = limit
        self.failures = 0
        self.reached = False

    def answered(self) -> None:
        """The server answered something: it exists, so the breaker stands down."""
        self.reached = True

    def failed_to_connect(self, reason: str) -> None:
        """One attempt could not connect; raises once `limit` attempts failed and none answered."""
        if self.reached:
            return
        self.failures += 1
        if self.failures >= self.limit:
            raise EndpointUnreachableError(
                f"openai: cannot connect to {self.endpoint}: the first {self.failures} attempts "
                f"all failed ({reason}); is the server running, and is base_url right? "
                "rerun the same command once it answers (the run resumes)"
            )
