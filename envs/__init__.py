"""Environments for jaxrl: one functional, vmappable protocol (see `envs.core`)."""

from envs.core import Environment, auto_reset
from envs.probes import PROBES, PROBES_BY_NAME, ProbeAnswer, ProbeEnv
from envs.registry import (
    UnknownEnvironmentError,
    env_family,
    make,
    register,
    registered_names,
)
from envs.spaces import Box, Discrete, Space
from envs.wrappers import EpisodeStatistics, completed_episode_summary

__all__ = [
    "PROBES",
    "PROBES_BY_NAME",
    "Box",
    "Discrete",
    "Environment",
    "EpisodeStatistics",
    "ProbeAnswer",
    "ProbeEnv",
    "Space",
    "UnknownEnvironmentError",
    "auto_reset",
    "completed_episode_summary",
    "env_family",
    "make",
    "register",
    "registered_names",
]
