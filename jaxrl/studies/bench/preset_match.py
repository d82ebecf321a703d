"""Today's presets as the yardstick of a run's config (``presets/ALGO/FAMILY.yaml``, the
defaults `jaxrl config ALGO --yaml` prints): whether a stored run's resolved config is today's
preset with its entry's overrides (`preset_reason`), what a suite's config asked of a run from
before a field existed (`known_then`), and a request without the fields at today's defaults
(`without_defaults`, what an entry's key digests).

No engine import: presets are read as plain YAML, once per algorithm and family.
"""

from __future__ import annotations

import functools
import json
import re

from envs import families
from jaxrl import named_yaml
from jaxrl.repo_data import PRESETS_DIR

_ALGO_NAME = re.compile(r"^[a-z0-9_]+$")


def _read(algo: str, family: str) -> dict | None:
    """``presets/ALGO/FAMILY.yaml`` as a mapping; None where there is none (or it is not a
    mapping, or ``algo`` is not an algorithm's name)."""
    if not _ALGO_NAME.match(algo):
        return None
    preset = _read_file(algo, family)
    return dict(preset) if preset is not None else None


@functools.cache
def _read_file(algo: str, family: str) -> dict | None:
    try:
        preset = named_yaml.read(PRESETS_DIR / algo / f"{family}.yaml", "preset", ValueError)
    except ValueError:
        return None
    return preset if isinstance(preset, dict) else None


def same_value(a, b) -> bool:
    """Equal as JSON values, numbers as floats (a traced ``1`` is stored as ``1.0``), a
    tuple as a list, None as an empty mapping."""
    def normal(x):
        if x is None:
            return {}
        if isinstance(x, bool) or not isinstance(x, (int, float, list, tuple, dict)):
            return x
        if isinstance(x, (int, float)):
            return float(x)
        if isinstance(x, dict):
            return {str(k): normal(v) for k, v in x.items()}
        return [normal(v) for v in x]
    return normal(a) == normal(b)


def preset_families(env: str) -> list[str]:
    """The preset families an env may belong to, judged from its name alone (no env is built,
    `envs.families.family_of`): classic control may be ``discrete`` or ``continuous``, which
    the caller tells apart by which preset the run matches better."""
    family = families.family_of(env)
    return ["discrete", "continuous"] if family in ("discrete", "continuous") else [family]


def without_defaults(algo, env, config: dict) -> dict:
    """``config`` without the fields at today's default of ``algo`` on ``env``: the value
    every preset family the env may belong to gives it (`preset_families`). A field a config
    class gained since a run was requested is then absent from both requests, the run's and
    today's, as is any other field asked at its default; a field set otherwise stays.
    Unchanged for an algorithm without presets (one registered at run time)."""
    defaults = _common_preset(str(algo).lower(), str(env))
    return {k: v for k, v in config.items() if not (k in defaults and same_value(v, defaults[k]))}


@functools.cache
def _common_preset(algo: str, env: str) -> dict:
    try:
        names = preset_families(env)
    except ValueError:
        return {}
    common: dict | None = None
    for family in names:
        preset = _read(algo, family)
        if preset is None:
            return {}
        common = preset if common is None else {
            k: v for k, v in common.items() if k in preset and same_value(v, preset[k])}
    return common or {}


def preset_reason(row: dict) -> str | None:
    """Why the run's resolved config (``run_config``, from its ``run.json``) is not what today's
    preset (``presets/ALGO/FAMILY.yaml``, the defaults `jaxrl config ALGO --yaml` prints) plus the
    entry's overrides (``config``) would give; None when it is, or when the row lacks either.
    A preset value ``auto`` is resolved at run time and matches anything; a field the run does
    not have is one the preset gained since."""
    ran, overrides = row.get("run_config"), row.get("config")
    if not isinstance(ran, dict) or not isinstance(overrides, dict):
        return None
    best = None
    for family in preset_families(str(row["env"])):
        preset = _read(str(row["algo"]), family)
        if preset is None:
            continue
        want = {**preset, **overrides}
        diff = [(k, ran[k], v) for k, v in want.items()
                if k in ran and v != "auto" and not same_value(ran[k], v)]
        if best is None or len(diff) < len(best[1]):
            best = (f"presets/{row['algo']}/{family}.yaml", diff)
    if best is None or not best[1]:
        return None
    changes = "; ".join(f"{k} ran {json.dumps(a, default=str)}, now {json.dumps(b, default=str)}"
                        for k, a, b in best[1])
    return f"{row['entry']}: its config is not today's preset ({best[0]}) with its overrides: {changes}"


def known_then(row: dict, key: str, now):
    """The suite's ``config`` now without the fields the run's config did not have (fields
    the config classes gained since it ran: a named preset lists every field) where the suite
    asks for the field's default (today's preset value: what the run had, in effect, before the
    field existed); other keys as they are. A new field set otherwise (``normalize_obs: true``
    on a run from before there was one) is a change."""
    ran = row.get("run_config")
    if key != "config" or not isinstance(now, dict) or not isinstance(ran, dict):
        return now
    asked = row.get(key) if isinstance(row.get(key), dict) else {}
    return {k: v for k, v in now.items()
            if k in ran or k in asked or not same_value(v, _preset_value(row, k, v))}


def _preset_value(row: dict, field: str, fallback):
    """``field``'s value in today's preset of the row's algorithm and env family (the first
    family's preset that has it); ``fallback`` where none does."""
    for family in preset_families(str(row.get("env"))):
        preset = _read(str(row.get("algo")), family)
        if preset is not None and field in preset:
            return preset[field]
    return fallback
