"""What ships: GPUs, models and quantization formats as DataFrames, and loaders for your own specs."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Union

from . import _core
from ._scenario import plain

if TYPE_CHECKING:  # pandas (and numpy) load inside the functions that use them: `import llmsim` stays light
    import pandas as pd

Source = Union[Mapping[str, Any], str, os.PathLike]


def _read(source: Source, what: str) -> str:
    if isinstance(source, Mapping):
        return json.dumps(plain(source, what), allow_nan=False)
    if isinstance(source, (str, os.PathLike)):  # read by the C++ core: regular files, size-capped, strict JSON
        return _core.spec.read_json(os.fspath(source), what)
    raise ValueError(f"{what}: expected a dict or a file path, got {type(source).__name__}")


def gpus() -> pd.DataFrame:
    """One row per built-in GPU (index: id): memory (``memory_gib``: the datasheet's "GB", which are GiB; and
    ``memory_gb``, decimal), bandwidth (GB/s), dense tensor peaks (TFLOP/s), interconnect (NVLink, the optional
    NVLink bridge of PCIe cards), board power under load and idle, the SM clock the tensor peaks are quoted at and
    the lower one a power-limited board holds under sustained tensor work (MHz; NaN where not stated), MIG profiles,
    the placeholder hourly price and the purchase price (USD; NaN where none is known)."""
    import pandas as pd
    frame = pd.DataFrame(json.loads(_core.spec.gpus()))
    return frame.set_index("id", drop=False).rename_axis(None)


def models() -> pd.DataFrame:
    """One row per built-in model (index: id): parameters, KV bytes per token, and the HF config fields."""
    import pandas as pd
    rows = json.loads(_core.spec.models())
    frame = pd.json_normalize(rows, sep=".")
    return frame.set_index("id", drop=False).rename_axis(None)


def quants() -> pd.DataFrame:
    """One row per weight format (index: id): bits per weight with metadata, compute path."""
    import pandas as pd
    frame = pd.DataFrame(json.loads(_core.spec.quants()))
    return frame.set_index("id", drop=False).rename_axis(None)


def quality() -> pd.DataFrame:
    """Published accuracy/perplexity deltas of quantized models against their 16-bit originals (format, model,
    metric, baseline, quantized, delta, source). llmsim does not model output quality: this is the table its
    compare caveat quotes wherever a quantized option wins."""
    import pandas as pd
    return pd.DataFrame(json.loads(_core.analysis.quality()))


def gpu_option(text: str) -> dict:
    """A GPU option as libsim parses it everywhere: ``"2xa100-80gb-pcie+nvlink"`` ->
    ``{"card": "a100-80gb-pcie", "count": 2, "pipeline": False, "nvlink_bridge": True, ...}``."""
    return json.loads(_core.spec.gpu_option(text))


def load_gpu_spec(source: Source) -> dict:
    """Validates a custom GPU spec (dict or JSON file, data/gpus format) and returns it with defaults filled.

    Use the result (or the raw dict) as ``scenario["hardware"]["gpu"]``. Bad fields raise ValueError.
    """
    return json.loads(_core.spec.gpu_from_json(_read(source, "gpu")))


def load_hf_config(source: Source, id: str | None = None) -> dict:
    """Reads a Hugging Face ``config.json`` (dict or path): returns id, params, KV bytes per token and
    the config as llmsim reads it. Use the config (or the raw dict) as ``scenario["model"]``."""
    if id is None and isinstance(source, Mapping):
        id = str(source.get("_name_or_path", "custom-model")).split("/")[-1]
    elif id is None:  # a HF snapshot keeps config.json in a folder named after the model
        path = Path(source)
        id = path.parent.name if path.name == "config.json" else path.stem
    return json.loads(_core.spec.model_from_hf_config(_read(source, "model"), id))
