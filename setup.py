"""PEP 517 build of the llmsim Python package: setuptools (setuptools.build_meta, see pyproject.toml) with a
build_ext that drives CMake. The pure-Python files come from bindings/llmsim; the compiled module llmsim._core
from CMake's target `llmsim_python` (bindings/CMakeLists.txt), built for the interpreter running pip; the command
line from `llmsim_python_cli` (the `llmsim` binary, bundled as llmsim/_bin/llmsim and run by the `llmsim` console
command and `python -m llmsim`, llmsim/__main__.py).

Default: a fresh CMake build of just the module and the CLI under setuptools' build folder (build/pip/...), with ccache as
compiler launcher when it is installed. To reuse an existing CMake build instead (seconds instead of minutes;
tests/install does this), point LLMSIM_CMAKE_BUILD_DIR at it; it must be configured from this source tree and
for a Python with this interpreter's extension suffix:

    LLMSIM_CMAKE_BUILD_DIR=build v/bin/pip install --no-build-isolation .
"""
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def project_version() -> str:
    m = re.search(r"project\(llmsim\s+VERSION\s+([0-9][0-9.]*)", (ROOT / "CMakeLists.txt").read_text())
    if not m:
        raise RuntimeError("CMakeLists.txt: no project(llmsim VERSION x.y.z)")
    return m.group(1)


def cache_value(build_dir: Path, name: str) -> str:
    for line in (build_dir / "CMakeCache.txt").read_text().splitlines():
        if line.startswith(name + ":"):
            return line.split("=", 1)[1]
    return ""


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        reuse = os.environ.get("LLMSIM_CMAKE_BUILD_DIR")
        if reuse:
            build_dir = Path(reuse).resolve()
            if not (build_dir / "CMakeCache.txt").is_file():
                raise RuntimeError(f"LLMSIM_CMAKE_BUILD_DIR={reuse}: not a configured CMake build (no CMakeCache.txt)")
            home = cache_value(build_dir, "CMAKE_HOME_DIRECTORY")
            if Path(home).resolve() != ROOT:
                raise RuntimeError(f"LLMSIM_CMAKE_BUILD_DIR={reuse} was configured for the sources in {home}, "
                                   f"not {ROOT}")
        else:
            build_dir = Path(self.build_temp).resolve() / "cmake"
            args = ["cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                    f"-DPython3_EXECUTABLE={sys.executable}", "-DLLMSIM_BUILD_PYTHON=ON",
                    "-DLLMSIM_BUILD_TESTS=OFF", "-DLLMSIM_BUILD_CLI=ON", "-DLLMSIM_BUILD_BENCH=OFF",
                    "-DLLMSIM_BUILD_CALIBRATION=OFF", "-DLLMSIM_INSTALL=OFF"]
            if shutil.which("ccache"):
                args.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
            subprocess.run(args, check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        if cache_value(build_dir, "LLMSIM_BUILD_CLI").upper() not in ("ON", "TRUE", "1", "YES"):
            raise RuntimeError(f"the CMake build in {build_dir} does not build the command line "
                               "(LLMSIM_BUILD_CLI=OFF): the package bundles it as the `llmsim` command")
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "llmsim_python", "llmsim_python_cli",
                        "-j", jobs], check=True)

        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = build_dir / "python" / "llmsim" / ("_core" + suffix)
        if not built.is_file():
            found = sorted(p.name for p in (build_dir / "python" / "llmsim").glob("_core*"))
            raise RuntimeError(f"{built} was not built: the CMake build in {build_dir} targets another Python "
                               f"(found {found or 'nothing'}, this interpreter needs _core{suffix})")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)
        # The command line, beside the package (executable bit kept: the wheel records it, pip restores it).
        exe = "llmsim" + (sysconfig.get_config_var("EXE") or "")
        cli = build_dir / "python" / "llmsim" / "_bin" / exe
        if not cli.is_file():
            raise RuntimeError(f"{cli} was not built (CMake target llmsim_python_cli)")
        (target.parent / "_bin").mkdir(exist_ok=True)
        shutil.copy2(cli, target.parent / "_bin" / exe)


setup(
    version=project_version(),
    packages=["llmsim"],
    package_dir={"llmsim": "bindings/llmsim"},
    package_data={"llmsim": ["py.typed", "_core.pyi"]},  # PEP 561: typed package, stubs of the compiled module
    ext_modules=[Extension("llmsim._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' scratch space inside the (git-ignored) build folder, beside a CMake build that may live there.
    options={"build": {"build_base": "build/pip"}, "egg_info": {"egg_base": "build/pip"}},
    zip_safe=False,
)
