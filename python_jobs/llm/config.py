"""Where LLM calls go: the endpoint, model, key and client limits, from the environment or the CLI's options."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

BASE_URL_ENV = "FINRAG_LLM_BASE_URL"
MODEL_ENV = "FINRAG_LLM_MODEL"
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

    @classmethod
    def from_env(cls, **overrides: Any) -> LLMConfig:
        """Environment first, explicit (non-None) overrides win."""
        key = next((os.environ[k] for k in KEY_ENVS if os.environ.get(k)), None)
        values: dict[str, Any] = {
            "base_url": os.environ.get(BASE_URL_ENV) or None,
            "model": os.environ.get(MODEL_ENV) or None,
            "api_key": key,
        }
        if os.environ.get(CONCURRENCY_ENV):
            values["concurrency"] = int(os.environ[CONCURRENCY_ENV])
        if os.environ.get(TIMEOUT_ENV):
            values["timeout"] = float(os.environ[TIMEOUT_ENV])
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    @property
    def embedded(self) -> bool:
        return not self.base_url
