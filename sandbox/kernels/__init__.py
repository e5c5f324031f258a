"""Kernel backends. Each implements `investigator.protocols.Kernel`."""
