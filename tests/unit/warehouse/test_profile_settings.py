"""The profile's DuckDB settings hold for every cursor of a build that spills to disk.

dbt-duckdb applies the profile's `settings` with SET on every cursor it opens: each model, each hook. DuckDB refuses
to move its temp directory once it has spilled there. So a `temp_directory` among the settings failed the 100-run
sweep bench's build at its publishing hook, after the models had spilled. These tests use the real profiles.yml, the
real dbt-duckdb cursor set-up and a real spill."""

from __future__ import annotations

import dataclasses
import os
from argparse import Namespace
from pathlib import Path

import duckdb
from dbt.adapters.duckdb.credentials import DuckDBCredentials
from dbt.adapters.duckdb.environments import Environment
from dbt.config.profile import Profile, read_profile
from dbt.config.renderer import ProfileRenderer
from dbt.flags import set_from_args
from dbt_common.context import set_invocation_context

from python_jobs.core.config import HOME_ENV
from support.paths import PROJECT


def dev_credentials(home: Path) -> DuckDBCredentials:
    """The profile's `dev` output for a home, read and rendered by dbt itself."""
    set_from_args(Namespace(), None)
    set_invocation_context({**os.environ, HOME_ENV: str(home)})
    profile = Profile.from_raw_profiles(read_profile(str(PROJECT)), "finrag", ProfileRenderer({}),
                                        target_override="dev")
    return profile.credentials


def test_a_cursor_opened_after_a_spill_takes_the_settings(tmp_path: Path) -> None:
    profiled = dev_credentials(tmp_path)
    assert Path(profiled.path).parent == tmp_path
    # a small limit so that one sort spills; the profile's other settings as they are
    creds = dataclasses.replace(profiled, settings={**profiled.settings, "memory_limit": "64MB"})
    con = duckdb.connect(creds.path)
    first = con.cursor()
    Environment.initialize_cursor(creds, first)
    first.execute("create table spilled as select i, random() as r, repeat('x', 40) as pad "
                  "from range(3000000) as t(i) order by r")
    spill_dirs = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert spill_dirs, "the sort did not spill: nothing to test"
    assert all(p.resolve().is_relative_to(tmp_path.resolve()) for p in spill_dirs)  # the spill stays in the home
    # what dbt-duckdb does for the next model or the on-run-end hook
    Environment.initialize_cursor(creds, con.cursor())
    assert con.execute("select current_setting('memory_limit')").fetchone()[0].startswith("61.0")  # 64 MB in MiB
    assert con.execute("select count(*) from spilled").fetchone()[0] == 3_000_000
