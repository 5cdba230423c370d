"""Scenario plumbing: dicts (or JSON files) to the JSON text the C++ core parses, exactly as the CLI does.

A scenario may name its model and GPU by catalogue id or file path, as in the CLI. From Python it may also
carry them inline — ``"model": {<HF config.json>}``, ``"hardware": {"gpu": {<GPU spec>}}`` — and those are
written once to a content-addressed file and passed by path, so every code path (threads, Dask workers on
this machine, the CLI) reads the same bytes.
"""
from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Mapping, Union

from . import _core

Scenario = Union[Mapping[str, Any], str, os.PathLike]


def _spec_dir() -> Path:
    d = Path(tempfile.gettempdir()) / f"llmsim-specs-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
    d.mkdir(parents=True, exist_ok=True)
    return d


def materialize(obj: Mapping[str, Any], stem: str) -> str:
    """Writes a JSON object to a content-addressed file (atomically) and returns its path."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"))
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", stem).strip("-") or "spec"
    path = _spec_dir() / f"{safe}-{digest}.json"
    if not path.exists():
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    return str(path)


def load(scenario: Scenario) -> dict:
    """A scenario as a fresh dict: from a mapping (deep-copied) or a JSON file path."""
    if isinstance(scenario, Mapping):
        return copy.deepcopy(dict(scenario))
    if isinstance(scenario, (str, os.PathLike)):
        path = Path(scenario)
        if not path.is_file():
            raise ValueError(f"scenario: no such file '{scenario}' (pass a dict or a JSON file path)")
        data = json.loads(path.read_text())
        if not isinstance(data, dict):
            raise ValueError(f"scenario: {scenario} must hold a JSON object, got {type(data).__name__}")
        return data
    raise ValueError(f"scenario: expected a dict or a JSON file path, got {type(scenario).__name__}")


def _inline_specs(s: dict) -> dict:
    model = s.get("model")
    if isinstance(model, Mapping):
        s["model"] = materialize(model, str(model.get("_name_or_path", "model")).split("/")[-1])
    hw = s.get("hardware")
    if isinstance(hw, Mapping):
        hw = dict(hw)
        if isinstance(hw.get("gpu"), Mapping):
            hw["gpu"] = materialize(hw["gpu"], str(hw["gpu"].get("id", "gpu")))
        if isinstance(hw.get("gpu_profile"), Mapping):
            hw["gpu_profile"] = materialize(hw["gpu_profile"], "profile-" + str(hw["gpu_profile"].get("gpu_id", "")))
        s["hardware"] = hw
    return s


def to_text(scenario: Scenario, overrides: Mapping[str, Any] | None = None) -> str:
    """JSON text of the scenario with dotted-path overrides applied by libsim (``analysis::apply_overrides``, as sweep
    grids apply them): a path that is not a scenario field is a ValueError, and an override that moves the scenario
    to another card drops the price that priced the old one, so the new card is billed at its own (catalogue) price
    unless the overrides set one. ``None`` values are skipped."""
    s = load(scenario)
    try:
        text = json.dumps(_inline_specs(s), allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ValueError(f"scenario: not representable as JSON ({e})") from None
    pairs = []
    for path, value in (overrides or {}).items():
        if value is None:
            continue
        if isinstance(value, Mapping) and path in ("model", "hardware.gpu", "hardware.gpu_profile"):
            stem = "model" if path == "model" else str(value.get("id", "gpu"))
            value = materialize(value, stem)
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{path}: not representable as JSON ({e})") from None
        pairs.append([path, value])
    if not pairs:
        return text
    return _core.analysis.apply_overrides(text, json.dumps(pairs, allow_nan=False))


def normalize(scenario: Scenario, **overrides: Any) -> dict:
    """The scenario as the simulator sees it: every default filled, unknown keys rejected (ValueError)."""
    return json.loads(_core.spec.normalize_scenario(to_text(scenario, overrides)))


def resolve(scenario: Scenario, **overrides: Any) -> dict:
    """The scenario with its model, GPU and price looked up and every cross-field rule checked."""
    return json.loads(_core.spec.resolve(to_text(scenario, overrides)))
