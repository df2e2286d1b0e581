"""Where landing validations go: the home's Great Expectations file context (its stored results and suites) and
its Data Docs.

Every result, passed or failed, is stored in the home's GX file context (`$FINRAG_HOME/gx/`, results under
gx/uncommitted/validations/, the suites under gx/expectations/), and the home's Data Docs
(`$FINRAG_HOME/data_docs/index.html`) are updated for it. The suites, the pandas datasource and the validation
definitions live in an in-memory (ephemeral) GX context of the process, so nothing of them is written and concurrent
jobs never rewrite each other's GX config; what is shared (the file context's config, the stores, the docs) is written
under a file lock (`gx/finrag.lock`). A frame landed in slices (`lake.Slices`, a 100M-line TREC run) is validated
slice by slice: one stored result per slice (run name `<partition>.slice-<i>-of-<n>`, the slice in the result's
`meta.finrag.slice`), each the verdict on exactly the rows it covers, rather than one merged result that GX never
computed; a failed slice's result is stored beside the passed slices before it.

Three GX templates are overridden (gx_views/, through the views of gx_site.py): GX draws the index's table in the
browser with jQuery and bootstrap-table from CDNs, so offline it lists nothing; ours is static HTML, loads no CDN
script, and shows the site's own logo instead of fetching GX's from S3 with the context id.

Cost: `import great_expectations` takes 3-4.5 s, so GX is imported when a landing first validates (`finrag sql`,
`finrag report`, `--help` never pay for it), with GX_ANALYTICS_ENABLED=False set before; the contexts are created
once per process.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from python_jobs.core.config import data_docs_dir, gx_dir
from python_jobs.core.console import say
from python_jobs.core.contracts import CONTRACTS, contract
from python_jobs.core.errors import JobError
from python_jobs.validation.expectations import gx, runner, suite_for

SITE = "local_site"
LOCK_NAME = "finrag.lock"
LOCK_TIMEOUT_S = 600


def _site_config() -> dict[str, Any]:
    views = "python_jobs.validation.gx_site"  # GX's page views with our templates first (see that module)
    return {
        "class_name": "SiteBuilder",
        "show_how_to_buttons": False,
        # relative to gx/: the docs sit beside it in the home, and the home stays movable
        "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": "../data_docs/"},
        "site_index_builder": {"class_name": "DefaultSiteIndexBuilder",
                               "view": {"module_name": views, "class_name": "IndexPageView"}},
        "site_section_builders": {
            "expectations": {"view": {"module_name": views, "class_name": "PageView"}},
            # GX's default hides runs whose name contains "profiling"; a run id may: partition values never hold "//"
            "validations": {"view": {"module_name": views, "class_name": "PageView"},
                            "run_name_filter": {"not_includes": "//"}},
            "profiling": "None",
        },
    }


_STORES: dict[Path, Any] = {}
_STORED_SUITES: dict[Path, set[str]] = {}


def _store(home: Path) -> Any:
    """The home's GX file context (gx/), created and configured once per process; call under the lock."""
    if home in _STORES:
        return _STORES[home]
    g = gx()
    from great_expectations.data_context.types.base import ProgressBarsConfig

    ctx = g.get_context(mode="file", project_root_dir=str(home))  # scaffolds gx/ on first use
    changed = False
    if dict(ctx.variables.data_docs_sites or {}) != {SITE: _site_config()}:
        ctx.variables.data_docs_sites = {SITE: _site_config()}
        changed = True
    bars = ctx.variables.progress_bars  # a ProgressBarsConfig when set here, a dict when read from the yml
    if (bars.get("globally") if isinstance(bars, dict) else getattr(bars, "globally", True)) is not False:
        ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
        changed = True
    if ctx.variables.config.analytics_enabled is not False:
        ctx.variables.config.analytics_enabled = False
        changed = True
    if changed:
        ctx.variables.save()
        ctx = g.get_context(mode="file", project_root_dir=str(home))  # stores and sites are built from the config
    _STORES[home] = ctx
    _STORED_SUITES[home] = set()
    return ctx


def _lock(home: Path) -> FileLock:
    gx_dir(home).mkdir(parents=True, exist_ok=True)
    return FileLock(str(gx_dir(home) / LOCK_NAME), timeout=LOCK_TIMEOUT_S)



# ---- results and Data Docs -----------------------------------------------------------------------------------
def keep(home: Path, results: Sequence[Any]) -> None:
    """Store validation results (passed or failed) in the home's GX file context and update its Data Docs for them.

    Under the home's GX lock: the stores and the docs index are shared by every job landing into the home. A docs
    failure is a warning (the results are stored; `finrag data-docs` rebuilds the docs from them), not a failed load.
    """
    if not results:
        return
    gx()  # first: it imports GX the safe way
    from great_expectations.data_context.types.resource_identifiers import ExpectationSuiteIdentifier

    keys = []
    for result in results:
        run_id = result.meta["run_id"]
        # the runner's in-memory store keeps every result; move each to the home's store instead
        (key,) = [k for k in runner().validation_results_store.list_keys()
                  if k.run_id == run_id and k.expectation_suite_identifier.name == result.suite_name]
        runner().validation_results_store.remove_key(key)
        keys.append(key)
    try:
        with _lock(home):
            store = _store(home)
            for key, result in zip(keys, results, strict=True):
                store.validation_results_store.set(key, result)
            suites = []
            for name in dict.fromkeys(r.suite_name for r in results):
                if name not in _STORED_SUITES[home]:  # once per process: the suite of this code's contracts
                    suite = suite_for(contract(name))
                    store.suites.add_or_update(suite)
                    _STORED_SUITES[home].add(name)
                    suites.append(ExpectationSuiteIdentifier(name=name))
            try:
                store.build_data_docs(site_names=[SITE], resource_identifiers=[*keys, *suites])
            except Exception as exc:  # noqa: BLE001 - the docs are a view of the stored results, rebuilt on demand
                say(f"warning: Data Docs not updated ({type(exc).__name__}: {exc}); `finrag data-docs` rebuilds them")
    except Timeout:
        raise JobError(f"another job has held the Great Expectations lock {gx_dir(home) / LOCK_NAME} for "
                       f"{LOCK_TIMEOUT_S} s") from None


def build_data_docs(home: Path) -> Path:
    """(Re)build the home's Data Docs from every stored validation result; returns index.html."""
    try:
        with _lock(home):
            store = _store(home)
            for name in sorted(CONTRACTS):
                if name not in _STORED_SUITES[home]:
                    store.suites.add_or_update(suite_for(contract(name)))
                    _STORED_SUITES[home].add(name)
            store.build_data_docs(site_names=[SITE])
    except Timeout:
        raise JobError(f"another job has held the Great Expectations lock {gx_dir(home) / LOCK_NAME} for "
                       f"{LOCK_TIMEOUT_S} s") from None
    return data_docs_dir(home) / "index.html"


def stored_results(home: Path) -> list[dict[str, Any]]:
    """Every stored validation result of the home, oldest first: suite (table), run name, run time, success, path.

    Read from the JSON files directly (no GX import): for tests, the dashboard and scripts."""
    import json

    root = gx_dir(home) / "uncommitted" / "validations"
    out = []
    for path in root.glob("*/*/*/*.json") if root.exists() else ():
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            continue  # a result being written (or cut short by a kill)
        run = doc.get("meta", {}).get("run_id") or {}
        out.append({"suite": doc.get("suite_name"), "run_name": run.get("run_name"), "run_time": run.get("run_time"),
                    "success": bool(doc.get("success")), "path": path})
    return sorted(out, key=lambda r: str(r["run_time"]))
