"""Seeing PRNG keys: eager `jax.random` calls, the key flow inside programs, and the key tree."""
