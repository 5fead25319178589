"""``--out DIR`` writing (gpupool.outdir, used by ``gpupool render``): nothing is written
through a symbolic link below DIR, and the files are written whole or not at all (issue 16,
item 12)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpupool.cli import main
from gpupool.errors import InputError
from gpupool.outdir import write_tree

ROOT = Path(__file__).resolve().parents[2]
PROD = str(ROOT / "stacks" / "Pulumi.prod.yaml")
FIRST = "001-namespace-cluster-gpu-ml-platform.yaml"  # the first file render prod writes


def _ours(head: bytes) -> bool:
    return head.startswith(b"# ours")


def test_render_never_writes_through_a_symlinked_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, elsewhere = tmp_path / "deploy", tmp_path / "home"
    out.mkdir()
    elsewhere.mkdir()
    (out / "onprem").symlink_to(elsewhere)  # what a pull request to a GitOps repo can add
    assert main(["render", PROD, "--out", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"gpupool render: --out {out}: onprem is a symbolic link; refusing to write "
                   "through it (it can point anywhere): remove it, or give another directory"]
    assert list(elsewhere.iterdir()) == []


def test_render_replaces_a_symlinked_file_and_leaves_its_target(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, victim = tmp_path / "deploy", tmp_path / "bashrc"
    victim.write_text("export PATH=/usr/bin\n")
    (out / "onprem").mkdir(parents=True)
    (out / "onprem" / FIRST).symlink_to(victim)
    (out / "onprem" / "stale.yaml").symlink_to(victim)  # a link is never "ours" to remove
    assert main(["render", PROD, "--out", str(out)]) == 0, capsys.readouterr().err
    assert victim.read_text() == "export PATH=/usr/bin\n"
    written = out / "onprem" / FIRST
    assert not written.is_symlink() and written.read_text().startswith("# Rendered by gpupool")
    assert (out / "onprem" / "stale.yaml").is_symlink()
    assert not any(p.name.startswith(".") for p in (out / "onprem").iterdir())  # no temporaries


def test_an_empty_out_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["render", PROD, "--out", ""])
    assert e.value.code == 2
    assert capsys.readouterr().err == ("gpupool render: --out: expected a value, got an empty "
                                       "string\n")
    with pytest.raises(InputError, match="--out: expected a directory, got an empty string"):
        write_tree("", {"a.yaml": "x"})


def test_a_failure_part_way_leaves_every_file_as_it_was(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "b.yaml").write_text("# ours, old b\n")
    (tmp_path / "p" / "c.yaml").mkdir()  # c.yaml cannot be replaced: a directory is in the way
    (tmp_path / "p" / "c.yaml" / "keep").write_text("")
    files = {"p/a.yaml": "# ours a\n", "p/b.yaml": "# ours new b\n", "p/c.yaml": "# ours c\n"}
    with pytest.raises(InputError, match=rf"^--out {tmp_path}: cannot write there \("):
        write_tree(tmp_path, files, ours=_ours)
    assert sorted(p.name for p in (tmp_path / "p").iterdir()) == ["b.yaml", "c.yaml"]
    assert (tmp_path / "p" / "b.yaml").read_text() == "# ours, old b\n"


def test_unchanged_files_are_not_touched_and_stale_ones_of_ours_go(tmp_path: Path) -> None:
    write_tree(tmp_path, {"p/a.yaml": "# ours a\n", "p/b.yaml": "# ours b\n"}, ours=_ours)
    a = (tmp_path / "p" / "a.yaml").stat()
    (tmp_path / "p" / "mine.yaml").write_text("# a user's file\n")
    written = write_tree(tmp_path, {"p/a.yaml": "# ours a\n"}, ours=_ours)
    assert written == [tmp_path / "p" / "a.yaml"]
    assert (tmp_path / "p" / "a.yaml").stat().st_ino == a.st_ino  # the same file, untouched
    assert sorted(p.name for p in (tmp_path / "p").iterdir()) == ["a.yaml", "mine.yaml"]


def test_nested_folders_are_checked_at_every_level(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "b").symlink_to(tmp_path)
    with pytest.raises(InputError, match="a/b is a symbolic link"):
        write_tree(tmp_path / ".", {"a/b/c/x.yaml": "x"})
    with pytest.raises(InputError, match="expected a path inside the directory"):
        write_tree(tmp_path, {"../x.yaml": "x"})


def test_the_directory_named_may_itself_be_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    os.symlink(real, tmp_path / "named")  # the user's own choice: followed
    write_tree(tmp_path / "named", {"p/x.yaml": "x"})
    assert (real / "p" / "x.yaml").read_text() == "x"
