"""Table variants for Rage and the rules on how they may be combined."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from bot.engines.errors import InvalidSetup


@dataclass(frozen=True, slots=True)
class RageOptions:
    """The table variants; all off by default."""

    plus_minus_one: bool = False
    hidden_bids: bool = False
    secret_bids: bool = False
    sweep: bool = False

    def __post_init__(self) -> None:
        """Reject combinations the rules exclude."""
        for name, value in asdict(self).items():
            if not isinstance(value, bool):
                raise InvalidSetup(f"option {name} must be true or false, not {value!r}")
        if self.hidden_bids and self.secret_bids:
            raise InvalidSetup("hidden bids and secret bids exclude each other; choose one")
        if self.plus_minus_one and (self.hidden_bids or self.secret_bids):
            raise InvalidSetup(
                "plus/minus one needs open bidding (the last bidder must see the other bids), "
                "so it cannot be combined with hidden or secret bids"
            )

    @property
    def simultaneous_bids(self) -> bool:
        """True when everyone bids at once (hidden or secret bids)."""
        return self.hidden_bids or self.secret_bids

    def to_dict(self) -> dict[str, bool]:
        """Plain-JSON form."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RageOptions:
        """Rebuild from to_dict; InvalidSetup on unknown keys or bad values."""
        if not isinstance(data, dict):
            raise InvalidSetup(f"options must be an object, not {data!r}")
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise InvalidSetup(f"unknown Rage options: {', '.join(sorted(unknown))}")
        return cls(**data)
