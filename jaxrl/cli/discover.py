"""The commands that say what there is: ``envs`` (the registered environment names, by family)
and ``config`` (an algorithm's config keys with their defaults for an env, static or traced, and
what each one does)."""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import textwrap
from pathlib import Path

import yaml

from envs import families, registry
from jaxrl import algos
from jaxrl.algos import references
from jaxrl.cli.common import check_writable, write_json
from jaxrl.cli.names import ENV_FAMILIES


# -- envs ----------------------------------------------------------------------------------------
def env_names(names: tuple[str, ...] = ENV_FAMILIES) -> dict[str, list[str] | str]:
    """``{family: names}`` for the families ``names``, each gymnax env once (by its bare name);
    for a suite that is not installed, the one line saying which extra installs it."""
    groups: dict[str, list[str] | str] = {}
    builtin: list[str] = []
    with contextlib.redirect_stdout(sys.stderr):  # importing brax prints mujoco's warp notice
        builtin = registry.registered_names(suites=())
    for name in names:
        family = families.BY_NAME[name]
        if family.adapter:
            try:
                with contextlib.redirect_stdout(sys.stderr):
                    groups[name] = registry.suite_tasks(family)
            except (registry.SuiteUnavailableError, registry.SuiteVersionError) as err:
                groups[name] = str(err)
            continue
        groups[name] = [n for n in builtin
                        if not n.startswith("gymnax:") and registry.env_family(n) == name]
    return groups


def cmd_envs(args) -> int:
    groups = env_names((args.family,) if args.family else ENV_FAMILIES)
    print("Environment names for --env, by family (the family picks an algorithm's defaults; "
          "a gymnax name also takes the prefix gymnax:, e.g. gymnax:CartPole-v1)")
    for family, names in groups.items():
        if isinstance(names, str):
            print(f"\n{family}: {names}")
            continue
        print(f"\n{family} ({len(names)}): {families.BY_NAME[family].doc}")
        if names:
            print(textwrap.fill("  ".join(names), width=100, initial_indent="  ",
                                subsequent_indent="  ", break_long_words=False,
                                break_on_hyphens=False))
    return 0


# -- config --------------------------------------------------------------------------------------
def check_env_name(name: str) -> None:
    """Raise `envs.UnknownEnvironmentError` (one line) unless `envs.make` knows ``name``, without
    building the env. A suite's task passes where the suite is not installed: its defaults need
    no simulator (building it then says which extra to install)."""
    family = families.prefixed_family(name)
    if family is not None and family.adapter:
        with contextlib.suppress(registry.SuiteUnavailableError, registry.SuiteVersionError):
            registry.check_task(family, name)
        return
    if name not in registry.registered_names(suites=()):
        raise registry.UnknownEnvironmentError(registry.unknown_name_message(name))


def config_rows(algo_name: str, env: str) -> tuple[algos.Algorithm, str, list[dict]]:
    """``(algorithm, family, rows)``: one row per config key of the algorithm's default config
    for ``env``, in declaration order: ``{"key", "value", "kind" (static | traced), "doc"}``."""
    algo = algos.get(algo_name)
    check_env_name(env)
    config = algo.default_config(env)
    rows = [{"key": f.name, "value": getattr(config, f.name),
             "kind": "static" if f.metadata.get("static", True) else "traced",
             "doc": f.metadata.get("doc", "")} for f in dataclasses.fields(config)]
    return algo, registry.env_family(env), rows


def _show(value) -> str:
    return value if isinstance(value, str) else repr(value)


def config_yaml(algo: str, env: str, family: str, rows: list[dict]) -> str:
    """The defaults as a YAML file for ``jaxrl train ALGO --config FILE``: one ``key: value``
    line per key, its kind and doc line as a comment."""
    lines = [f"# jaxrl {algo} defaults for {env} (family {family}): "
             f"jaxrl train {algo} --env {env} --config THIS_FILE"]
    for r in rows:
        if r["key"] == "total_steps":  # the run's budget: --total-steps
            continue
        value = list(r["value"]) if isinstance(r["value"], tuple) else r["value"]
        text = yaml.safe_dump({r["key"]: value}, default_flow_style=True).strip()[1:-1]
        lines.append(f"{text}  # {r['kind']}{': ' + r['doc'] if r['doc'] else ''}")
    return "\n".join(lines) + "\n"


def cmd_config(args) -> int:
    check_writable(args.json)
    algo, family, rows = config_rows(args.algo, args.env)
    write_json(args.json, {"algo": algo.name, "env": args.env, "family": family, "keys": rows})
    if args.yaml:
        print(config_yaml(algo.name, args.env, family, rows), end="")
        return 0
    print(f"{algo.name} defaults for {args.env} (family {family}); change a key with "
          "--set KEY=VALUE. Static keys fix the compiled program; traced ones do not recompile.")
    table = [("key", "value", "kind", "doc")]
    table += [(r["key"], _show(r["value"]), r["kind"], r["doc"]) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(3)]
    for row in table:
        cells = [cell.ljust(w) for cell, w in zip(row[:3], widths)]
        print("  ".join([*cells, row[3]]).rstrip())
    return 0


#: One env per family whose defaults are committed as YAML presets (`write_presets`).
PRESET_ENVS = {f.name: f.preset_env for f in families.FAMILIES}


def reference_config(preset: references.Preset):
    """A named preset's whole config: its keys on the config class's own defaults, or on
    jaxrl's defaults for its env (``base="family"``)."""
    algo = algos.get(preset.algo)
    base = algo.default_config(preset.env) if preset.base == "family" else algo.config_cls()
    return base.replace(**preset.values())


def reference_yaml(name: str, preset: references.Preset) -> str:
    """A named preset as a YAML file: a header (what it is, how to use it, what of the
    reference it cannot reproduce), then every config key, the preset's own with its source."""
    config = reference_config(preset)
    family = registry.env_family(preset.env)
    others = ("jaxrl's config-class defaults (the reference has no such setting, or it does "
              "not bear on it)" if preset.base == "class"
              else f"jaxrl's defaults for {preset.env} (family {family})")
    lines = [f"# {name}: {preset.title}",
             f"# use: jaxrl train {preset.algo} --env {preset.env} --config {name}",
             f"#      (a benchmark suite entry: preset: {name})",
             f"# keys with a source comment are the preset's own; the others are {others}"]
    if preset.absent:
        lines.append("# not reproduced (the reference's settings jaxrl has no key for):")
        lines += [f"#   - {text}" for text in preset.absent]
    for f in dataclasses.fields(config):
        if f.name == "total_steps":  # the run's budget: --total-steps
            continue
        value = getattr(config, f.name)
        value = list(value) if isinstance(value, tuple) else value
        text = yaml.safe_dump({f.name: value}, default_flow_style=True).strip()[1:-1]
        kind = "static" if f.metadata.get("static", True) else "traced"
        note = (preset.keys[f.name][1] if f.name in preset.keys
                else f.metadata.get("doc", "") or "")
        lines.append(f"{text}  # {kind}{': ' + note if note else ''}")
    return "\n".join(lines) + "\n"


def preset_files() -> dict[str, str]:
    """``{"presets/ALGO/NAME.yaml": text}``: every algorithm's defaults for every family whose
    action kind it takes (``ALGO/FAMILY``, `config_yaml`) and the named presets of
    `jaxrl.algos.references` (`reference_yaml`), as committed in the repository (a test checks
    the committed files against this, so they follow the code)."""
    out = {f"presets/{name}.yaml": reference_yaml(name, preset)
           for name, preset in references.PRESETS.items()}
    for name in sorted(algos.BUILT_IN):
        kinds = algos.get(name).action_kinds
        for family, env in PRESET_ENVS.items():
            kind = families.BY_NAME[family].action_kind
            if family != "probe" and kind not in kinds:
                continue
            algo, fam, rows = config_rows(name, env)
            out[f"presets/{name}/{family}.yaml"] = config_yaml(algo.name, env, fam, rows)
    return out


def write_presets(root: str = ".") -> list[str]:
    """Write `preset_files` under ``root``; returns the paths written."""
    for rel, text in preset_files().items():
        path = Path(root) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return sorted(preset_files())

