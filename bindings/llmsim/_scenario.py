"""Scenario plumbing: dicts (or JSON files) to the JSON text the C++ core parses, exactly as the CLI does.

A scenario may name its model and GPU by catalogue id or file path, as in the CLI, or carry them inline —
``"model": {<HF config.json>}``, ``"hardware": {"gpu": {<GPU spec>}}``, ``"hardware": {"gpu_profile": {...}}``.
Inline specs travel inside the scenario's JSON text (the C++ parser reads the objects); nothing is written to a
file, so no other user of the machine can change what a scenario runs. Values may be numpy scalars or arrays
(converted to plain numbers and lists); anything else that is not JSON raises ``ConfigError`` naming the field.
Files are read by the C++ core: regular files only, size-capped, duplicate keys refused.
"""
from __future__ import annotations

import json
import math
import os
import warnings
from typing import Any, Mapping, Optional, Union

from . import _core
from ._core import ConfigError

Scenario = Union[Mapping[str, Any], str, os.PathLike]


def plain(value: Any, path: str = "") -> Any:
    """``value`` as plain JSON data: numpy scalars and arrays become Python numbers and lists, tuples lists.
    ConfigError naming ``path`` for NaN/inf, non-string keys and values JSON cannot hold."""
    where = path or "scenario"
    if value is None or isinstance(value, (bool, str)):
        return str(value) if isinstance(value, str) else value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ConfigError(f"{where}: expected a finite number, got {value}")
        return float(value)
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ConfigError(f"{where}: keys must be strings, got {key!r}")
            out[key] = plain(item, f"{path}.{key}" if path else key)
        return out
    if isinstance(value, (list, tuple)):
        return [plain(item, f"{where}[{i}]") for i, item in enumerate(value)]
    if type(value).__module__ == "numpy" and callable(getattr(value, "tolist", None)):
        return plain(value.tolist(), path)  # np.int64(3) -> 3, np.array([1, 2]) -> [1, 2], np.bool_ -> bool
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise ConfigError(f"{where}: a {type(value).__name__} is not representable as JSON")


_INT64 = (-(2 ** 63), 2 ** 63 - 1)


def whole(value: Any, name: str, low: int = _INT64[0]) -> int:
    """An integer argument (numpy integers, and floats that are whole numbers such as 1e12) as an int; ConfigError
    naming ``name`` with the range it takes for anything else: 1.5 is not truncated to 1, NaN, a bool or a number
    past a 64-bit integer is not passed on to fail without the argument's name."""
    v = value.tolist() if type(value).__module__ == "numpy" and callable(getattr(value, "tolist", None)) else value
    if isinstance(v, float) and not math.isfinite(v):
        v = None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not v.is_integer()) \
            or not low <= v <= _INT64[1]:
        raise ConfigError(f"{name}: expected a whole number from {low} to {_INT64[1]}, got {value!r}")
    return int(v)


def read_json(path: Union[str, os.PathLike], what: str) -> Any:
    """A JSON file, read and strictly parsed by the C++ core (ConfigError naming ``what``)."""
    return json.loads(_core.spec.read_json(os.fspath(path), what))


def load(scenario: Scenario) -> dict:
    """A scenario as a fresh plain dict: from a mapping (converted, so never aliased) or a JSON file path."""
    if isinstance(scenario, Mapping):
        return plain(scenario)
    if isinstance(scenario, (str, os.PathLike)):
        data = read_json(scenario, "scenario")
        if not isinstance(data, dict):
            raise ConfigError(f"scenario: {os.fspath(scenario)} must hold a JSON object, got {type(data).__name__}")
        return data
    raise ConfigError(f"scenario: expected a dict or a JSON file path, got {type(scenario).__name__}")


def to_text(scenario: Scenario, overrides: Mapping[str, Any] | None = None, vllm_args: Optional[str] = None,
            sglang_args: Optional[str] = None) -> str:
    """JSON text of the scenario with dotted-path overrides applied by libsim (``analysis::apply_overrides``, as sweep
    grids apply them): a path that is not a scenario field is a ValueError, and an override that moves the scenario
    to another card drops the price that priced the old one, so the new card is billed at its own (catalogue) price
    unless the overrides set one. ``None`` values are skipped; numpy values are converted (``plain``).

    ``vllm_args`` / ``sglang_args``: a server's command line (``"vllm serve MODEL -tp 2 --max-num-seqs 128"``), read
    by libsim as the CLI's ``--vllm-args`` / ``--sglang-args`` (``analysis::server_arg_sets``). Precedence: the
    scenario < the command line < the keyword overrides. Flags llmsim does not model are named in a
    ``ServerArgsWarning``; an unknown or misspelled flag is a ValueError with the flag it resembles."""
    text = json.dumps(load(scenario), allow_nan=False)
    check_server_lines(vllm_args, sglang_args)
    line = bool(vllm_args or sglang_args)
    if line and (not isinstance(vllm_args or "", str) or not isinstance(sglang_args or "", str)):
        raise ConfigError("vllm_args/sglang_args: expected the command line as one string")
    given = [[path, plain(value, path)] for path, value in (overrides or {}).items() if value is not None]
    # The card is placed first: its count drops the tp/pp of 1 the scenario wrote for its own card
    # (spec::set_json_path), never one the command line or a keyword gives beside it (that one counts).
    card = [p for p in given if p[0] == "hardware.gpu"]
    rest = [p for p in given if p[0] != "hardware.gpu"]
    if card:
        text = _core.analysis.apply_overrides(text, json.dumps(card, allow_nan=False))
    before = text
    if line:
        # libsim applies the line (analysis::apply_server_sets): a value a field refuses names the flag typed.
        text, notes = _core.analysis.apply_server_line(text, vllm_args or "", sglang_args or "")
        for note in notes:
            warnings.warn(note, ServerArgsWarning, stacklevel=3)
    if rest:
        text = _core.analysis.apply_overrides(text, json.dumps(rest, allow_nan=False))
    if line:  # a bad value the line gave is named by the flag typed (libsim's rule, as the CLI's)
        _core.analysis.check_server_fields(text, before, vllm_args or "", sglang_args or "", [p for p, _ in given])
    return text


def check_server_lines(vllm_args: Optional[str], sglang_args: Optional[str]) -> None:
    """ConfigError naming the argument when a server command line is given blank (the CLI's rule for
    ``--vllm-args ""``): an unset variable would drop the server's settings without a word."""
    for name, line in (("vllm_args", vllm_args), ("sglang_args", sglang_args)):
        if isinstance(line, str) and not line.strip():
            example = ("python -m sglang.launch_server --model-path MODEL --max-running-requests 128 ..."
                       if name == "sglang_args" else "vllm serve MODEL --max-num-seqs 128 ...")
            raise ConfigError(f"{name}: an empty command line: give the server's own (\"{example}\"), "
                              f"or leave it out (None)")


class ScenarioWarning(UserWarning):
    """What a scenario prices that its user should hear about before trusting a number — today a GPU profile fitted
    from one runtime's runs pricing another. The one rule is C++ (``analysis::scenario_warnings``): ``simulate`` puts
    it in ``summary["warnings"]``, and ``capacity``, ``compare``, ``report``, ``search`` and ``sweep`` issue it as
    this warning and keep it in their results (``"warnings"`` / ``frame.attrs["warnings"]``)."""


def scenario_warnings(texts, stacklevel: int = 3) -> list:
    """The distinct warnings of scenarios (JSON texts, as ``to_text`` makes them), each issued once as a
    ``ScenarioWarning``; returned in order for the caller's result object."""
    found = _core.analysis.scenario_warnings([texts] if isinstance(texts, str) else list(texts))
    for w in found:
        warnings.warn(w, ScenarioWarning, stacklevel=stacklevel)
    return list(found)


class ServerArgsWarning(UserWarning):
    """A server command line (``vllm_args=``, ``sglang_args=``) named flags llmsim does not model, or a model
    name matched to a catalogue id: the text says which."""


def dotted(overrides: Mapping[str, Any]) -> dict:
    """Keyword overrides as dotted scenario paths: ``hardware__gpu="l4-24gb"`` is ``hardware.gpu``. Every function
    that takes a scenario takes them (simulate, capacity, compare, report, sweep, search, throughput, check, memory,
    step); libsim applies them (``to_text``), so a misspelt path is a ValueError naming it."""
    return {str(k).replace("__", "."): v for k, v in overrides.items()}


def with_keywords(named: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict:
    """The scenario paths a function's own keywords set (``gpu`` is ``hardware.gpu``, None when not given) with its
    ``__`` keywords (``dotted(overrides)``) over them. One field is one value: given both ways
    (``gpu_memory_utilization`` and ``engine__gpu_memory_utilization``) with two values is a ConfigError naming the field; one not given (None)
    never hides the other. (Splatting both into one call raised Python's TypeError "got multiple values for keyword
    argument 'engine.gpu_memory_utilization'" even when the named keyword was left unset.)"""
    out = dict(named)
    for path, value in dotted(overrides).items():
        given = out.get(path)
        if value is None:
            out.setdefault(path, None)
            continue
        if given is not None:
            try:
                same = plain(given, path) == plain(value, path)
            except ConfigError:
                same = False
            if not same:
                raise ConfigError(f"{path}: given twice, as a keyword ({given!r}) and as "
                                  f"{path.replace('.', '__')} ({value!r}); give it once")
        out[path] = value
    return out


def split_overrides(kwargs: Mapping[str, Any]) -> "tuple[dict, dict]":
    """``(dotted overrides, the rest)``: for functions whose other keyword arguments are options (compare's and
    sweep's capacity options), a name with ``__`` is a scenario path, any other name an option."""
    return (dotted({k: v for k, v in kwargs.items() if "__" in k}),
            {k: v for k, v in kwargs.items() if "__" not in k})


def normalize(scenario: Scenario, **overrides: Any) -> dict:
    """The scenario as the simulator sees it: every default filled, unknown keys rejected (ValueError)."""
    return json.loads(_core.spec.normalize_scenario(to_text(scenario, dotted(overrides))))


def resolve(scenario: Scenario, **overrides: Any) -> dict:
    """The scenario with its model, GPU and price looked up and every cross-field rule checked."""
    return json.loads(_core.spec.resolve(to_text(scenario, dotted(overrides))))
