"""scripts/build_llama_wheel.sh cuts ggml's x86 CPU variant list to the ones asked for, refuses a
name ggml does not have with one line and exit 2, and keys its cache folder by the variant list.

The source archive here is a stand-in holding only the file the script changes
(``vendor/llama.cpp/ggml/src/CMakeLists.txt``, its x86 and ARM variant blocks as llama-cpp-python
0.3.36 ships them); ``KARMA_LLAMA_PREPARE_ONLY=1`` stops the script before the compile, so nothing
here builds llama.cpp.
"""

from __future__ import annotations

import os
import re
import subprocess
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "build_llama_wheel.sh"

CMAKELISTS = """\
if (GGML_CPU_ALL_VARIANTS)
    if (GGML_SYSTEM_ARCH STREQUAL "x86")
        ggml_add_cpu_backend_variant(x64)
        ggml_add_cpu_backend_variant(sse42              SSE42)
        ggml_add_cpu_backend_variant(sandybridge        SSE42 AVX)
        if (NOT MSVC)
            ggml_add_cpu_backend_variant(ivybridge      SSE42 AVX F16C)
            ggml_add_cpu_backend_variant(piledriver     SSE42 AVX F16C FMA)
        endif()
        ggml_add_cpu_backend_variant(haswell            SSE42 AVX F16C FMA AVX2 BMI2)
        ggml_add_cpu_backend_variant(skylakex           SSE42 AVX F16C FMA AVX2 BMI2 AVX512)
        ggml_add_cpu_backend_variant(cannonlake         SSE42 AVX F16C FMA AVX2 BMI2 AVX512 AVX512_VBMI)
        ggml_add_cpu_backend_variant(cascadelake        SSE42 AVX F16C FMA AVX2 BMI2 AVX512 AVX512_VNNI)
        ggml_add_cpu_backend_variant(icelake            SSE42 AVX F16C FMA AVX2 BMI2 AVX512 AVX512_VBMI AVX512_VNNI)
        if (NOT MSVC)
            ggml_add_cpu_backend_variant(cooperlake     SSE42 AVX F16C FMA AVX2 BMI2 AVX512 AVX512_VNNI AVX512_BF16)
            ggml_add_cpu_backend_variant(zen4           SSE42 AVX F16C FMA AVX2 BMI2 AVX512 AVX512_VBMI AVX512_VNNI AVX512_BF16)
        endif()
        ggml_add_cpu_backend_variant(alderlake          SSE42 AVX F16C FMA AVX2 BMI2 AVX_VNNI)
        if (NOT MSVC)
            ggml_add_cpu_backend_variant(sapphirerapids SSE42 AVX F16C FMA AVX2 BMI2 AVX512 AVX512_VBMI AVX512_VNNI AVX512_BF16 AMX_TILE AMX_INT8)
        endif()
    elseif(GGML_SYSTEM_ARCH STREQUAL "ARM")
        ggml_add_cpu_backend_variant(armv8.0_1)
        ggml_add_cpu_backend_variant(armv8.2_1    DOTPROD)
    endif()
endif()
"""


def _sdist(tmp_path: Path) -> Path:
    top = tmp_path / "sdist" / "llama_cpp_python-0.3.36"
    cmakelists = top / "vendor" / "llama.cpp" / "ggml" / "src" / "CMakeLists.txt"
    cmakelists.parent.mkdir(parents=True)
    cmakelists.write_text(CMAKELISTS)
    archive = tmp_path / "llama_cpp_python-0.3.36.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(top, arcname=top.name)
    return archive


def _run(tmp_path: Path, variants: str | None) -> subprocess.CompletedProcess[str]:
    env = dict(
        os.environ,
        KARMA_WHEELS=str(tmp_path / "wheels"),
        KARMA_LLAMA_SDIST=str(_sdist(tmp_path)),
        KARMA_LLAMA_PREPARE_ONLY="1",
    )
    env.pop("KARMA_LLAMA_CPU_VARIANTS", None)
    if variants is not None:
        env["KARMA_LLAMA_CPU_VARIANTS"] = variants
    return subprocess.run(
        ["bash", str(SCRIPT), "dispatch"], env=env, capture_output=True, text=True, timeout=60
    )


def _variants(src: Path) -> list[str]:
    text = (src / "vendor" / "llama.cpp" / "ggml" / "src" / "CMakeLists.txt").read_text()
    return re.findall(r"ggml_add_cpu_backend_variant\(([\w.]+)", text)


def test_the_default_keeps_five_x86_levels_and_leaves_arm_alone(tmp_path):
    result = _run(tmp_path, None)
    assert result.returncode == 0, result.stderr
    src = Path(result.stdout.strip().splitlines()[-1])
    assert _variants(src) == ["x64", "haswell", "skylakex", "icelake", "zen4", "armv8.0_1", "armv8.2_1"]
    assert "variants: x64 haswell skylakex icelake zen4" in result.stderr


def test_all_keeps_ggmls_list_and_gets_another_cache_folder(tmp_path):
    default = _run(tmp_path / "a", None)
    full = _run(tmp_path / "b", "all")
    assert full.returncode == 0, full.stderr
    src = Path(full.stdout.strip().splitlines()[-1])
    assert len(_variants(src)) == 16  # 14 x86 + 2 ARM, untouched
    default_key = Path(default.stdout.strip().splitlines()[-1]).parents[1].name
    assert src.parents[1].name != default_key  # llama-cpp-python-0.3.36-<key>: the list is in the key


def test_an_unknown_variant_is_one_line_and_exit_2(tmp_path):
    result = _run(tmp_path, "x64 haswell skylake")
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if not line.startswith("[llama-wheel] building")]
    assert len(lines) == 1 and "KARMA_LLAMA_CPU_VARIANTS" in lines[0] and "'skylake'" in lines[0], lines
