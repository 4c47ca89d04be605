"""Seeing differentiation: `jax.grad` & co. replaced, and the forward/backward split JAX makes."""
