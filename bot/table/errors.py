"""Errors of the table layer, and the one place engine errors become user messages."""

from __future__ import annotations

from collections.abc import Callable

from bot.engines.errors import IllegalMove


class Localized:
    """A message parameter put into words only when the reader's language is known."""

    def __init__(self, render: Callable[[object], str]) -> None:
        self.render = render

    def __str__(self) -> str:
        return self.render(None)


def localize(params: dict[str, object], locale: object) -> dict[str, object]:
    """The parameters of a message, with every Localized one in the reader's language."""
    return {
        name: value.render(locale) if isinstance(value, Localized) else value
        for name, value in params.items()
    }


class UserError(Exception):
    """Bad input from a user: answered privately with a translated message, never logged."""

    def __init__(self, key: str, /, **params: object) -> None:
        super().__init__(key)
        self.key = key
        self.params = params


class TableMovedOn(UserError):
    """A click on a button of an older turn, an older game or a finished game."""

    def __init__(self) -> None:
        super().__init__("table.moved_on")


class SaveFailed(UserError):
    """A change could not be saved: memory, the database and the message stay as they were."""

    def __init__(self) -> None:
        super().__init__("table.save_failed")


class DatabaseDown(SaveFailed):
    """The database is out of reach (or will not write): nothing changed, try again soon."""

    def __init__(self) -> None:
        UserError.__init__(self, "table.db_down")


class TableBusy(SaveFailed):
    """A click could not be saved in time because the table is still busy with an earlier
    change (a save that has not answered yet): nothing changed, try again soon."""

    def __init__(self) -> None:
        UserError.__init__(self, "table.busy")


class SaveUnknown(UserError):
    """A save was sent but the database went away before saying whether it was kept.

    The table settles it by reading the row back once the database answers, and shows
    the outcome then.
    """

    def __init__(self) -> None:
        super().__init__("table.save_unknown")


# Engine error codes whose meaning at a table is "that button is out of date".
MOVED_ON_CODES = frozenset({"game_over", "wrong_phase"})
# Engine error codes answered with a table-level key rather than error.<code>.
TABLE_KEYS = {"unknown_player": "table.not_seated"}


def user_error_for(error: IllegalMove, describe: dict[str, object] | None = None) -> UserError:
    """The user message for an engine error: ``error.<code>`` filled from its details.

    ``describe`` maps detail names to text already prepared for people (names, colours),
    since engine details are plain ids and codes.
    """
    if error.code in MOVED_ON_CODES:
        return TableMovedOn()
    params: dict[str, object] = {**error.details, **(describe or {})}
    return UserError(TABLE_KEYS.get(error.code, f"error.{error.code}"), **params)
