"""Robust optimal classification trees (in progress)."""
