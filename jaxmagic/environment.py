"""`%jaxmagic`: what JAX is running on, and which settings change what the views show."""

from __future__ import annotations

CONFIG_FLAGS = (
    "jax_enable_x64",
    "jax_disable_jit",
    "jax_debug_nans",
    "jax_debug_infs",
    "jax_platforms",
    "jax_explain_cache_misses",
    "jax_compilation_cache_dir",
    "jax_traceback_filtering",
    "jax_debug_key_reuse",
    "jax_default_prng_impl",
    "jax_enable_custom_prng",
)


def environment_report(magics: list[str]) -> str:
    import jax

    from . import __version__

    lines = [f"jaxmagic {__version__}", f"JAX {jax.__version__}"]
    try:
        from jaxlib.version import __version__ as jaxlib_version

        lines[-1] += f" (jaxlib {jaxlib_version})"
        devices = jax.devices()
        lines.append(f"backend: {jax.default_backend()}, {len(devices)} device(s)")
        for device in devices[:16]:
            lines.append(f"  {device.id}: {device.device_kind} ({device.platform})")
        if len(devices) > 16:
            lines.append(f"  … and {len(devices) - 16} more")
    except Exception as exc:  # boundary: a report on the environment says what failed
        lines.append(f"backend: unavailable ({type(exc).__name__}: {exc})")
    lines.append("config:")
    for flag in CONFIG_FLAGS:
        try:
            lines.append(f"  {flag} = {getattr(jax.config, flag)!r}")
        except AttributeError:
            pass  # not a flag of this JAX version
    lines.append("magics: " + ", ".join(f"%%{m}" for m in magics) + ", %jaxmagic")
    return "\n".join(lines)
