"""Knob values: parsing SATURATE_KNOBS and casting each value to the type of the script's default."""

import json

_TRUE = ("on", "true", "yes", "1")
_FALSE = ("off", "false", "no", "0")


def parse_knobs(text):
    """The knob table from SATURATE_KNOBS. Returns (dict, error): an empty or absent variable is ({}, None);
    text that is not a JSON object is ({}, a one-line reason) so the script still runs on its defaults."""
    if not text or not text.strip():
        return {}, None
    try:
        table = json.loads(text)
    except ValueError as e:
        return {}, "SATURATE_KNOBS is not JSON: %s" % e
    if not isinstance(table, dict):
        return {}, "SATURATE_KNOBS is not a JSON object"
    return table, None


def _to_bool(raw):
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, (int, float)) and raw in (0, 1):
        return bool(raw)
    if isinstance(raw, str):
        word = raw.strip().lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
    raise ValueError("not a boolean (on/off, true/false, 1/0)")


def _to_int(raw):
    if isinstance(raw, bool):
        raise ValueError("a boolean is not an integer")
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float):
        if raw.is_integer():
            return int(raw)
        raise ValueError("not a whole number")
    if isinstance(raw, str):
        return int(raw.strip())
    raise ValueError("not an integer")


def _to_float(raw):
    if isinstance(raw, bool):
        raise ValueError("a boolean is not a number")
    if isinstance(raw, (int, float)):
        return float(raw)
    if isinstance(raw, str):
        return float(raw.strip())
    raise ValueError("not a number")


def _to_str(raw):
    if isinstance(raw, str):
        return raw
    if isinstance(raw, bool):
        return "on" if raw else "off"
    if isinstance(raw, (int, float)):
        return str(raw)
    raise ValueError("not a string")


def cast(raw, default):
    """`raw` (a decoded JSON value) as the type of `default`. A None default accepts any value unchanged.
    Raises ValueError when the value does not fit that type."""
    if default is None:
        return raw
    if isinstance(default, bool):  # before int: bool is a subclass of int
        return _to_bool(raw)
    if isinstance(default, int):
        return _to_int(raw)
    if isinstance(default, float):
        return _to_float(raw)
    if isinstance(default, str):
        return _to_str(raw)
    if isinstance(raw, type(default)):
        return raw
    try:
        return type(default)(raw)
    except Exception as e:
        raise ValueError("cannot make a %s from it: %s" % (type(default).__name__, e))
