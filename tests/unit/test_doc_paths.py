"""Every repository path the docs name exists: in every Markdown file of the repository and in the docstrings and
comments of the Python code (python_jobs/, dashboards/, bench/, tests/support/), a name that looks like a path of
this repository must be one, and a dotted name of a Python object of the project must resolve.

What counts as a path (the rules of `named_paths`):
- a token that starts with a top-level directory of the repository (`python_jobs/`, `models/`, `.ci/`, ...): the
  file or directory must exist. `<name>`, `{name}`, `*` and `**` are placeholders: the path must then match at least
  one existing path, as a glob (`prompts/judge_<metric>_v1.txt`);
- a relative token with a `/` that ends in a source file's extension (`sources/lines.py`, `img/overview.png`): some
  existing path must end with it (the text says which folder; CONTRIBUTING's tree lists files under their package);
- a bare file name with a source extension (`lake.py`, `contracts.yml`): some file of the repository has that name;
- a Markdown link target (`[text](img/x.png)`): relative to the Markdown file, as a renderer resolves it;
- `../shared/...`: relative to the checkout, checked where shared/ is beside it (CI lays it there);
- a dotted name under a package of the repository (`python_jobs.core.lake.Lake.land`) or a module path followed by an
  object (`python_jobs/judge.check_score`): the longest prefix that is a module must exist and the rest must be
  defined in it (top-level names, then class members, followed through the module's imports), read from the AST.
Left alone: paths under `$FINRAG_HOME/`, `~/` or another absolute root (a home's lake, caches: not the repository),
URLs, and anything preceded by a `/` or `.` (a tail of a longer token that is not the repository's)."""

from __future__ import annotations

import ast
import io
import re
import subprocess
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from support.paths import PROJECT

# the Python code whose docstrings and comments are read
CODE_DIRS = ("python_jobs", "dashboards", "bench", "tests/support")
# extensions of the repository's own files: a relative path or a bare name ending in one is a path of the repository;
# data and runtime files (.jsonl, .parquet, .duckdb, a home's _manifest.json) are not, and `spark.sql` is a method
SOURCE_EXTENSIONS = ("py", "sql", "yml", "yaml", "md", "toml", "txt", "csv", "json", "png", "properties")
BARE_EXTENSIONS = ("py", "yml", "yaml", "md", "toml")
# a path token: what a path of this repository is spelt with, placeholders included
TOKEN = r"[\w./<>{}*-]+"
# not a path of ours when it continues something: a URL's or an absolute path's tail, $FINRAG_HOME/..., ~/..., x.y/z
BEFORE = r"(?<![\w/.$~:<>{}*-])"
MARKDOWN_LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)\s]*)?\)")


@dataclass(frozen=True)
class Repo:
    root: Path
    files: frozenset[str]
    dirs: frozenset[str]

    @property
    def names(self) -> frozenset[str]:
        return frozenset(f.rsplit("/", 1)[-1] for f in self.files)

    def exists(self, path: str) -> bool:
        path = path.rstrip("/")
        return path in self.files or path in self.dirs

    def matches(self, pattern: str) -> bool:
        """pattern's placeholders (<x>, {x}, *, **) as globs; true when some path matches."""
        regex = re.compile("".join(
            ".*" if part == "**" else "[^/]*" if part == "*" or part[:1] in "<{" else re.escape(part)
            for part in re.split(r"(\*\*|\*|<[^>]*>|\{[^}]*\})", pattern.rstrip("/")) if part
        ))
        return any(regex.fullmatch(p) for p in self.files | self.dirs)


def repository(root: Path) -> Repo:
    """The repository's files: git's (tracked and new, ignored left out) in a checkout, else every file under root."""
    if (root / ".git").exists():
        listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=root,
                                capture_output=True, text=True, check=True).stdout.splitlines()
        files = frozenset(f for f in listed if (root / f).exists())  # a file deleted but not yet staged is gone
    else:
        files = frozenset(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    dirs = frozenset(str(parent) for f in files for parent in Path(f).parents if str(parent) != ".")
    return Repo(root, files, dirs)


def doc_texts(repo: Repo) -> Iterator[tuple[str, int, str]]:
    """(file, line, text) of every Markdown line, and of every docstring and comment line of the code."""
    for f in sorted(repo.files):
        if f.endswith(".md"):
            for i, line in enumerate((repo.root / f).read_text(encoding="utf-8").splitlines(), 1):
                yield f, i, line
        elif f.endswith(".py") and f.startswith(tuple(f"{d}/" for d in CODE_DIRS)):
            source = (repo.root / f).read_text(encoding="utf-8")
            for node in ast.walk(ast.parse(source)):
                if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                    doc = node.body[0] if node.body else None
                    if (isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant)
                            and isinstance(doc.value.value, str)):
                        for i, line in enumerate(doc.value.value.splitlines()):
                            yield f, doc.lineno + i, line
            for tok in tokenize.generate_tokens(io.StringIO(source).readline):
                if tok.type == tokenize.COMMENT:
                    yield f, tok.start[0], tok.string


def named_paths(repo: Repo, file: str, text: str) -> list[tuple[str, bool]]:
    """Each path-like name in one line of text, in order, and whether it exists (the rules in the module
    docstring). A stretch of text is read by the first rule that matches it."""
    tops = sorted({f.split("/", 1)[0] for f in repo.files if "/" in f}, key=len, reverse=True)
    packages = [t for t in tops if f"{t}/__init__.py" in repo.files]
    found: list[tuple[int, str, bool]] = []
    seen: list[tuple[int, int]] = []

    def claim(m: re.Match, group: int = 0) -> bool:
        start, end = m.span(group)
        if any(a < end and start < b for a, b in seen):
            return False
        seen.append((start, end))
        return True

    if file.endswith(".md"):
        for m in MARKDOWN_LINK.finditer(text):
            target = m.group(1)
            if re.match(r"[a-z]+:", target) or not claim(m, 1):  # http:, mailto:
                continue
            resolved = (repo.root / Path(file).parent / target).resolve()
            inside = resolved.is_relative_to(repo.root.resolve())
            found.append((m.start(1), target, inside and repo.exists(resolved.relative_to(repo.root.resolve())
                                                                      .as_posix())))
    for m in re.finditer(BEFORE + r"\.\./shared/" + TOKEN, text):
        path = _trim(m.group(0))
        if claim(m) and (repo.root.parent / "shared").is_dir() and not _has_placeholder(path):
            found.append((m.start(), path, (repo.root.parent / path.removeprefix("../")).exists()))
    for m in re.finditer(BEFORE + "(?:" + "|".join(map(re.escape, tops)) + r")/" + TOKEN, text):
        if not claim(m):
            continue
        path = _trim(m.group(0))
        if _has_placeholder(path):
            ok = repo.matches(path)
        elif repo.exists(path):
            ok = True
        elif path.split("/", 1)[0] in packages and not path.endswith(tuple(f".{e}" for e in SOURCE_EXTENSIONS)):
            ok = resolves(repo, path.replace("/", "."))  # python_jobs/judge.check_score
        else:
            ok = False
        found.append((m.start(), path, ok))
    relative = BEFORE + r"[\w.-]+(?:/[\w.<>{}*-]+)+\.(?:" + "|".join(SOURCE_EXTENSIONS) + r")\b(?![\w/])"
    for m in re.finditer(relative, text):
        tail = m.group(0)
        if claim(m) and not tail.startswith("."):
            found.append((m.start(), tail, repo.matches(f"**/{tail}") or repo.matches(tail)))
    for m in re.finditer(BEFORE + r"[\w-]+\.(?:" + "|".join(BARE_EXTENSIONS) + r")\b(?![\w/.-])", text):
        if claim(m):
            found.append((m.start(), m.group(0), m.group(0) in repo.names))
    for m in re.finditer(BEFORE + "(?:" + "|".join(map(re.escape, packages)) + r")(?:\.\w+)+", text):
        if claim(m):
            found.append((m.start(), m.group(0), resolves(repo, m.group(0))))
    return [(path, ok) for _, path, ok in sorted(found)]


def _trim(token: str) -> str:
    return token.rstrip(".,;:")


def _has_placeholder(path: str) -> bool:
    return bool(re.search(r"[*<>{}]", path))


def resolves(repo: Repo, dotted: str) -> bool:
    """A dotted name of the repository's code: the longest module prefix exists and the rest is defined in it."""
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        base = "/".join(parts[:n])
        for candidate in (f"{base}.py", f"{base}/__init__.py"):
            if candidate in repo.files:
                return _defined(repo, candidate, parts[n:])
        if n == len(parts) and base in repo.dirs:  # a namespace folder
            return True
    return False


def _defined(repo: Repo, module: str, names: list[str]) -> bool:
    if not names:
        return True
    body: list[ast.stmt] = ast.parse((repo.root / module).read_text(encoding="utf-8")).body
    for depth, name in enumerate(names):
        found = None
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == name:
                found = node
            elif isinstance(node, ast.Assign | ast.AnnAssign) and name in {
                    t.id for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                    if isinstance(t, ast.Name)}:
                return True  # a value: its attributes are not followed
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        return (resolves(repo, ".".join([node.module, alias.name, *names[depth + 1:]]))
                                if node.module.split(".")[0] == module.split("/")[0] else True)
        if found is None:
            # a submodule of a package (python_jobs.judge.verdicts) is not in its __init__'s body
            package = Path(module).parent.as_posix()
            sub = next((c for c in (f"{package}/{name}.py", f"{package}/{name}/__init__.py") if c in repo.files), None)
            return (module.endswith("__init__.py") and depth == 0 and sub is not None
                    and _defined(repo, sub, names[1:]))
        if isinstance(found, ast.FunctionDef | ast.AsyncFunctionDef):
            return depth == len(names) - 1
        body = found.body
    return True


def stale_paths(root: Path) -> list[str]:
    repo = repository(root)
    return [f"{file}:{line}: {path}" for file, line, text in doc_texts(repo)
            for path, ok in named_paths(repo, file, text) if not ok]


def test_every_path_the_docs_name_exists() -> None:
    repo = repository(PROJECT)
    named = [(f, p, ok) for f, _, text in doc_texts(repo) for p, ok in named_paths(repo, f, text)]
    assert len(named) > 300  # the scan sees the docs and the code's docstrings
    stale = [f"{f}:{line}: {p}" for f, line, text in doc_texts(repo) for p, ok in named_paths(repo, f, text)
             if not ok]
    assert not stale, "the docs name paths that do not exist (point them at what exists now):\n" + "\n".join(stale)


def test_the_check_finds_a_stale_path(tmp_path: Path) -> None:
    # the check above passes on any tree it cannot read: here it sees a tree with a stale name of each kind
    (tmp_path / "python_jobs" / "llm").mkdir(parents=True)
    (tmp_path / "python_jobs" / "__init__.py").write_text("")
    (tmp_path / "python_jobs" / "llm" / "__init__.py").write_text("")
    (tmp_path / "python_jobs" / "llm" / "client.py").write_text(
        '"""The client (python_jobs/llm/client.py; the server was python_jobs/llm_server.py)."""\n\n\n'
        "class Client:\n    def call(self) -> None:\n        pass  # see python_jobs.llm.client.Client.call\n\n\n"
        "# python_jobs.llm.client.Client.stream, python_jobs.llm.gone and python_jobs/llm.Client are gone\n")
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "judge_acc_v1.txt").write_text("")
    (tmp_path / "docs" / "img").mkdir(parents=True)
    (tmp_path / "docs" / "img" / "a.png").write_text("")
    (tmp_path / "docs" / "guide.md").write_text(
        "See [the image](img/a.png), [the gone one](img/b.png), `prompts/judge_<metric>_v1.txt`,\n"
        "`prompts/qa_<task>_v1.txt`, `llm/client.py`, `llm/server.py`, `client.py`, `server.py`,\n"
        "`$FINRAG_HOME/lake/<table>/part-0.parquet`, `~/.cache/finrag`, https://example.com/python_jobs/x.py,\n"
        "and `python_jobs/ingest.py`'s docstring.\n")
    assert stale_paths(tmp_path) == [
        "docs/guide.md:1: img/b.png",
        "docs/guide.md:2: prompts/qa_<task>_v1.txt",
        "docs/guide.md:2: llm/server.py",
        "docs/guide.md:2: server.py",
        "docs/guide.md:4: python_jobs/ingest.py",
        "python_jobs/llm/client.py:1: python_jobs/llm_server.py",
        "python_jobs/llm/client.py:9: python_jobs.llm.client.Client.stream",
        "python_jobs/llm/client.py:9: python_jobs.llm.gone",
        "python_jobs/llm/client.py:9: python_jobs/llm.Client",
    ]
