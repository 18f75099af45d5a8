"""The log's two formats (CARDTABLE_LOG_FORMAT): one readable line, or one JSON object a
line for log shippers (Loki, Elasticsearch, CloudWatch...).

Either way the handler's RedactingFilter (bot.runtime.settings) has taken the token and the
database password out of the record before it is formatted here.
"""

from __future__ import annotations

import json
import logging
import time

TEXT_FORMAT = "%(asctime)s %(levelname)-8s %(name)s: %(message)s"
TEXT_DATES = "%Y-%m-%d %H:%M:%S"


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (UTC, ISO 8601), level, logger, message, and the
    traceback as ``exception`` when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as one line of JSON (a traceback's newlines escaped inside it)."""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        entry: dict[str, object] = {
            "time": f"{stamp}.{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = record.stack_info
        return json.dumps(entry, ensure_ascii=False)


def formatter(kind: str) -> logging.Formatter:
    """The formatter of CARDTABLE_LOG_FORMAT's ``kind`` ("text" or "json")."""
    if kind == "json":
        return JsonFormatter()
    return logging.Formatter(TEXT_FORMAT, TEXT_DATES)
