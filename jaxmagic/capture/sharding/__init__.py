"""Seeing where arrays live: meshes, shardings, shards, and the collectives XLA inserted."""
