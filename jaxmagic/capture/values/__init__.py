"""Seeing values: forward values, NaN/Inf origins, and where `vmap` put batch dimensions."""
