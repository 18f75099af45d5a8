"""Where the PostgreSQL half of the suite gets its server, and when it may not skip."""

from __future__ import annotations

import pytest

import tests.backends as backends


@pytest.fixture
def no_postgres(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine without PostgreSQL binaries and without a server URL."""
    monkeypatch.delenv(backends.URL_VARIABLE, raising=False)
    monkeypatch.setattr(backends, "postgres_binaries", lambda: None)


@pytest.mark.usefixtures("no_postgres")
def test_missing_postgres_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under CI=true a missing PostgreSQL fails the run: the half it covers must not vanish."""
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="required under CI"):
        next(backends.server_url())


@pytest.mark.usefixtures("no_postgres")
def test_missing_postgres_skips_on_a_developer_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without CI the PostgreSQL half is skipped, and the reason says how to get it."""
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=backends.URL_VARIABLE):
        next(backends.server_url())


def test_given_url_is_used_as_is(monkeypatch: pytest.MonkeyPatch) -> None:
    """CARDTABLE_TEST_DATABASE_URL wins over starting a server of our own."""
    monkeypatch.setenv(backends.URL_VARIABLE, "postgresql://ci@/postgres?host=/run/x")
    monkeypatch.setattr(backends, "postgres_binaries", lambda: pytest.fail("not looked up"))
    assert next(backends.server_url()) == "postgresql://ci@/postgres?host=/run/x"


def test_search_path_is_added_to_the_url() -> None:
    """A test's schema travels in its URL (asyncpg passes it on as a server setting)."""
    url = backends.with_query("postgresql://u@/db?host=/tmp/s", search_path="test_1")
    assert url == "postgresql://u@/db?host=%2Ftmp%2Fs&search_path=test_1"
