"""Prompt templates: the files under prompts/, versioned by name and hash (the hash enters run ids).

A template has `# comment` lines, then sections `[system]`, `[user]` and optionally one-shot example turns
`[example_user]` / `[example_assistant]` (small models follow a reply format far better when the example is an
earlier chat turn than when it is described). This is the one parser of prompt files.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from python_jobs.core.config import PROJECT_DIR
from python_jobs.core.errors import InputError


def messages(system: str | None, user: str) -> tuple[tuple[str, str], ...]:
    return ((("system", system),) if system else ()) + (("user", user),)


PROMPTS_DIR = PROJECT_DIR / "prompts"
_SECTION = re.compile(r"^\[(system|user|example_user|example_assistant)\]\s*$", re.MULTILINE)
_ROLES = {"system": "system", "user": "user", "example_user": "user", "example_assistant": "assistant"}


@dataclass(frozen=True)
class PromptTemplate:
    """A prompt file: `# comment` lines, then `[system]`, optional `[example_user]` / `[example_assistant]` turns and
    the `[user]` turn, with {placeholders}."""

    name: str
    text: str
    path: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()

    @property
    def ref(self) -> str:
        """name@hash12: what generation_runs.prompt_template holds (a template edit changes it)."""
        return f"{self.name}@{self.sha256[:12]}"

    def parts(self) -> list[tuple[str, str]]:
        """(section, text) in file order."""
        body = "\n".join(x for x in self.text.splitlines() if not x.startswith("#"))
        bits = _SECTION.split(body)
        out = [(bits[i], bits[i + 1].strip("\n")) for i in range(1, len(bits) - 1, 2)]
        if not any(name == "user" for name, _ in out):
            raise ValueError(f"prompt template {self.path} has no [user] section")
        return out

    def sections(self) -> dict[str, str]:
        return dict(self.parts())

    def examples(self) -> list[str]:
        """The example replies (a generated instance that copies one is rejected)."""
        return [text for name, text in self.parts() if name == "example_assistant"]

    def example_text(self) -> str:
        """The worked example, its passages and its reply: what a paraphrased copy borrows its words from."""
        return "\n".join(text for name, text in self.parts() if name in ("example_user", "example_assistant"))

    def render(self, **values: str) -> tuple[tuple[str, str], ...]:
        """The chat messages, placeholders replaced (one regex pass, not str.format: passages hold braces)."""
        def fill(s: str) -> str:
            # one pass: a value that itself contains "{question}" is not expanded again
            return re.sub(r"\{(\w+)\}", lambda m: values.get(m[1], m[0]), s)

        parts = self.parts()
        if any(name.startswith("example_") for name, _ in parts):
            return tuple((_ROLES[name], fill(text)) for name, text in parts)
        sec = dict(parts)
        return messages(fill(sec["system"]) if sec.get("system") else None, fill(sec["user"]))


def load_template(name_or_path: str) -> PromptTemplate:
    """A template by name (prompts/<name>.txt) or by path."""
    p = Path(name_or_path)
    if not p.exists():
        p = PROMPTS_DIR / f"{name_or_path}.txt"
    if not p.exists():
        known = sorted(x.stem for x in PROMPTS_DIR.glob("*.txt"))
        raise InputError(f"no prompt template {name_or_path!r} (known: {', '.join(known)})", field="template")
    return PromptTemplate(p.stem, p.read_text(), str(p))


def render_prompt(msgs: Sequence[tuple[str, str]] | Sequence[dict[str, str]]) -> str:
    """The full prompt as stored with an answer: every message, role-tagged."""
    items = [(m["role"], m["content"]) if isinstance(m, dict) else m for m in msgs]
    return "\n\n".join(f"<{role}>\n{content}" for role, content in items)
