"""What an LLM call costs: the prices per 1k tokens of seeds/llm_prices.csv (read when a client opens, so an edited
price applies to the next job), and a call's cost from its token counts; a model not listed there costs null."""

from __future__ import annotations

import csv
from pathlib import Path

from python_jobs.core.config import PROJECT_DIR

PRICES_CSV = PROJECT_DIR / "seeds" / "llm_prices.csv"


def load_prices(path: Path = PRICES_CSV) -> dict[str, tuple[float, float]]:
    if not path.exists():
        return {}
    with open(path, newline="") as fh:
        return {r["model"]: (float(r["input_usd_per_1k_tokens"]), float(r["output_usd_per_1k_tokens"]))
                for r in csv.DictReader(fh)}


def call_cost(prices: dict[str, tuple[float, float]], model: str, prompt_tokens: int | None,
              completion_tokens: int | None) -> float | None:
    price = prices.get(model)
    if price is None or prompt_tokens is None or completion_tokens is None:
        return None
    return prompt_tokens / 1000 * price[0] + completion_tokens / 1000 * price[1]
