"""`NetworkStatic`: the static fields every algorithm has, declared once."""

from __future__ import annotations

import dataclasses

from jaxrl.config import StaticConfig, static
from jaxrl.parts import diagnostics as diag
from jaxrl.parts.torsos import check_network_fields


@dataclasses.dataclass(frozen=True)
class NetworkStatic(StaticConfig):
    """The base of every algorithm's static fields: its network's torso (``hidden``,
    ``torso``, ``activation``) and its diagnostics level (``verbosity``). A kit whose defaults
    differ sets them with `jaxrl.config.defaults` (the off-policy learners: 256 x 256 ReLU)."""

    hidden: tuple[int, ...] = static((64, 64), "MLP widths")
    torso: str = static("auto", "auto | mlp | minatar_cnn | nature_cnn | nature_cnn_small"
                        " (auto: by observation shape; a conv torso ends in its own dense layer"
                        " and replaces hidden)")
    activation: str = static("tanh", "tanh | relu | elu | silu")
    verbosity: str = static("basic", "diagnostics level: basic | debug | full")

    def validate(self) -> None:
        check_network_fields(self.activation, self.torso, self.verbosity, diag.LEVELS)
