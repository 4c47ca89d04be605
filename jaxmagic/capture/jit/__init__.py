"""Seeing jitted calls: the call hook, signatures, JAX's phase timings, cache logs and why a call missed."""
