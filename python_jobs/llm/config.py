"""Where LLM calls go: the endpoint, model, key and client limits, from the environment or the CLI's options."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from python_jobs.core.console import say

BASE_URL_ENV = "FINRAG_LLM_BASE_URL"
MODEL_ENV = "FINRAG_LLM_MODEL"
# the project's variables first, then the openai SDK's own, which users of any OpenAI-compatible tool already set
BASE_URL_ENVS = (BASE_URL_ENV, "OPENAI_BASE_URL")
KEY_ENVS = ("FINRAG_LLM_API_KEY", "OPENAI_API_KEY")
CONCURRENCY_ENV = "FINRAG_LLM_CONCURRENCY"
TIMEOUT_ENV = "FINRAG_LLM_TIMEOUT"


# ---- configuration -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LLMConfig:
    base_url: str | None = None  # None = start the embedded default
    model: str | None = None
    api_key: str | None = field(default=None, repr=False)  # never printed, never stored
    timeout: float = 120.0  # seconds per HTTP attempt
    max_attempts: int = 5  # tries per call, the first included
    concurrency: int = 4
    backoff_initial: float = 1.0  # seconds; exponential with jitter up to backoff_max
    backoff_max: float = 30.0
    # the embedded default already running (a sweep starts one for all its runs): its URL; the client then starts
    # none, and the runs stay the embedded model's (no base_url: host "embedded" in their config hashes)
    embedded_url: str | None = None

    @classmethod
    def from_env(cls, **overrides: Any) -> LLMConfig:
        """Environment first, explicit (non-None) overrides win. The endpoint is FINRAG_LLM_BASE_URL, else
        OPENAI_BASE_URL; the key FINRAG_LLM_API_KEY, else OPENAI_API_KEY. A key with no endpoint does not make the
        openai SDK's default (api.openai.com) the target, since a job would then leave the machine unasked: the
        embedded model answers, the key is not sent, and a warning names the variable that was ignored."""
        key_env = next((k for k in KEY_ENVS if os.environ.get(k)), None)
        key = os.environ[key_env] if key_env else None
        values: dict[str, Any] = {
            "base_url": next((os.environ[k] for k in BASE_URL_ENVS if os.environ.get(k)), None),
            "model": os.environ.get(MODEL_ENV) or None,
            "api_key": key,
        }
        if os.environ.get(CONCURRENCY_ENV):
            values["concurrency"] = int(os.environ[CONCURRENCY_ENV])
        if os.environ.get(TIMEOUT_ENV):
            values["timeout"] = float(os.environ[TIMEOUT_ENV])
        values.update({k: v for k, v in overrides.items() if v is not None})
        if key_env and not values.get("base_url") and overrides.get("api_key") is None:
            say(f"warning: {key_env} is set but no endpoint is ({' / '.join(BASE_URL_ENVS)} or --llm-base-url): "
                f"the embedded model answers and {key_env} is ignored; set OPENAI_BASE_URL=https://api.openai.com/v1 "
                "to call OpenAI")
            values["api_key"] = None
        return cls(**values)

    @property
    def embedded(self) -> bool:
        return not self.base_url
