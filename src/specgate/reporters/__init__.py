"""Reporters: each turns a report into text; no I/O."""

from __future__ import annotations
