"""The MLflow reader's checks before MLflow's client opens a store (python_jobs/sources/mlflow_traces.py): a password
never reaches an error or the lake, and a sqlite URI is a file that exists (MLflow's client would create one)."""

from __future__ import annotations

import pytest

from python_jobs.core.errors import InputError
from python_jobs.sources.mlflow_traces import check_local_store, shown


@pytest.mark.parametrize(("uri", "expected"), [
    ("https://ops:s3cret@mlflow.example.com:8443/", "https://ops@mlflow.example.com:8443/"),
    ("postgresql://app:pw@db/mlflow", "postgresql://app@db/mlflow"),
    ("http://mlflow.internal:5000", "http://mlflow.internal:5000"),
    ("sqlite:///mlflow.db", "sqlite:///mlflow.db"),
])
def test_a_password_is_not_shown(uri: str, expected: str) -> None:
    assert shown(uri) == expected


@pytest.mark.parametrize("uri", ["sqlite://", "sqlite:///:memory:"])
def test_a_sqlite_store_is_a_file(uri: str) -> None:
    with pytest.raises(InputError, match="a sqlite store is a file"):
        check_local_store(uri)


def test_a_server_is_left_to_the_client() -> None:
    check_local_store("http://127.0.0.1:1")  # nothing to check before the client asks it
