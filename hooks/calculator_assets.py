"""Files the calculator page (docs/matrix/calculator.md) loads when the reader presses 运行, copied into the built site:
``assets/calculator/pyodide/`` (only the files ``loadPyodide`` fetches, from the npm package ``pyodide`` that
``scripts/setup.sh`` installs: nothing from a CDN), ``parallelsel-<version>-py3-none-any.whl`` (this library as a
byte-reproducible wheel) and ``manifest.json`` (what this build contains; ``pyodide`` is ``null`` without npm)."""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import shutil
import tomllib
import zipfile
from pathlib import Path

log = logging.getLogger("mkdocs.hooks.calculator_assets")

# What loadPyodide() fetches from its indexURL (Pyodide's "Downloading and deploying" docs: the runtime is
# pyodide.asm.js + pyodide.asm.wasm, the standard library python_stdlib.zip, the package index pyodide-lock.json).
PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")
OUT = Path("assets") / "calculator"
_EPOCH = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip entry can carry: no build time leaks into the wheel


def _record_hash(data: bytes) -> str:
    # PEP 376/427 RECORD: sha256, urlsafe base64 without padding.
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(root: Path, out_dir: Path) -> Path:
    """Write ``parallelsel``'s pure-Python wheel (PEP 427) from the sources under ``root`` into ``out_dir``.

    Contents: every ``parallelsel/**/*.py`` and ``*.json`` (package data, e.g. ``render/verdicts.json``) plus ``<name>-<version>.dist-info/{METADATA,WHEEL,RECORD}`` with the
    name, version, Python requirement and dependencies of ``pyproject.toml``. Deterministic: entries sorted,
    timestamps fixed, mode 0644.
    """
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    name, version = project["name"], project["version"]
    info = f"{name}-{version}.dist-info"
    files: list[tuple[str, bytes]] = [(p.relative_to(root).as_posix(), p.read_bytes()) for p in sorted(
        q for ext in ("*.py", "*.json") for q in (root / name).rglob(ext)) if "__pycache__" not in p.parts]
    meta = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}", f"Summary: {project.get('description', '')}"]
    if "requires-python" in project:
        meta.append(f"Requires-Python: {project['requires-python']}")
    meta += [f"Requires-Dist: {d}" for d in project.get("dependencies", [])]
    files.append((f"{info}/METADATA", ("\n".join(meta) + "\n").encode()))
    files.append((f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: parallelsel hooks/calculator_assets.py\n"
                                   b"Root-Is-Purelib: true\nTag: py3-none-any\n"))
    record = "".join(f"{path},{_record_hash(data)},{len(data)}\n" for path, data in files) + f"{info}/RECORD,,\n"
    files.append((f"{info}/RECORD", record.encode()))

    out_dir.mkdir(parents=True, exist_ok=True)
    wheel = out_dir / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for path, data in files:
            entry = zipfile.ZipInfo(path, date_time=_EPOCH)
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o644 << 16
            zf.writestr(entry, data)
    return wheel


def on_post_build(config, **kwargs) -> None:
    root = Path(config.config_file_path).resolve().parent
    out = Path(config.site_dir) / OUT
    wheel = build_wheel(root, out)
    src = root / "node_modules" / "pyodide"
    pyodide = None
    if all((src / f).is_file() for f in PYODIDE_FILES):
        (out / "pyodide").mkdir(parents=True, exist_ok=True)
        for f in PYODIDE_FILES:
            shutil.copyfile(src / f, out / "pyodide" / f)
        pkg = json.loads((src / "package.json").read_text(encoding="utf-8"))
        pyodide = {"index": "pyodide/", "module": "pyodide/pyodide.mjs", "version": pkg["version"]}
    else:
        # INFO, not a warning: a build without npm is valid; the page tells the reader (and the browser test fails in CI).
        log.info("calculator: node_modules/pyodide not found (scripts/setup.sh installs it with npm); "
                 "the calculator page will say it is not part of this build")
    manifest = {"wheel": wheel.name, "pyodide": pyodide}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
