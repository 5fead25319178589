"""``--output`` writes through to what the path names (issue 7, item 9): regular files whole or
not at all, symlinks kept as links, devices and FIFOs written through, never replaced."""

from __future__ import annotations

import io
import os
import stat
import sys
import threading
from pathlib import Path

import pytest

from gpupool.errors import InputError
from gpupool.output import _mkstemp, _resolve, write_output, write_stdout

TEXT = "report → line one\nline two\n"


def test_a_new_file_is_written_whole_and_readable_as_the_umask_says(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        target = tmp_path / "report.sarif"
        assert write_output(target, TEXT) is False
    finally:
        os.umask(old)
    assert target.read_text(encoding="utf-8") == TEXT
    assert stat.S_IMODE(target.stat().st_mode) == 0o644  # not mkstemp's 0600
    assert [p.name for p in tmp_path.iterdir()] == ["report.sarif"]  # no temporary left


def test_an_existing_file_is_replaced_and_keeps_its_permissions(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text("old")
    target.chmod(0o640)
    write_output(target, TEXT)
    assert target.read_text(encoding="utf-8") == TEXT
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_a_symlink_stays_a_link_and_the_file_it_names_gets_the_text(tmp_path: Path) -> None:
    (tmp_path / "reports").mkdir()
    real = tmp_path / "reports" / "latest.json"
    real.write_text("old")
    link = tmp_path / "report.json"
    link.symlink_to(Path("reports") / "latest.json")
    write_output(link, TEXT)
    assert link.is_symlink() and os.readlink(link) == "reports/latest.json"
    assert real.read_text(encoding="utf-8") == TEXT
    dangling = tmp_path / "next.json"
    dangling.symlink_to(tmp_path / "reports" / "next.json")
    write_output(dangling, TEXT)
    assert dangling.is_symlink()
    assert (tmp_path / "reports" / "next.json").read_text(encoding="utf-8") == TEXT


def test_a_fifo_is_written_through_to_its_reader(tmp_path: Path) -> None:
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_output(fifo, TEXT)
    reader.join(10)
    assert got == [TEXT.encode()]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_a_fifo_without_a_reader_fails_in_time_instead_of_hanging(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    monkeypatch.setenv("GPUPOOL_FIFO_TIMEOUT", "0.3")
    with pytest.raises(InputError, match=r"^--output .*report\.fifo: is a named pipe \(FIFO\) "
                                         r"and no process opened it for reading within 0\.3 s"):
        write_output(fifo, TEXT)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_a_character_device_is_written_through_not_replaced(tmp_path: Path) -> None:
    null = tmp_path / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # the same device as /dev/null
    write_output(null, TEXT)
    assert stat.S_ISCHR(null.lstat().st_mode)
    assert null.read_bytes() == b""


def test_descriptor_aliases_are_descriptors_whatever_the_link_chain(tmp_path: Path) -> None:
    for alias in ("/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", f"/proc/{os.getpid()}/fd/1"):
        assert _resolve(alias)[0] == 1, alias
    assert _resolve("/dev/stderr")[0] == 2
    link = tmp_path / "out"
    link.symlink_to("/dev/stdout")
    assert _resolve(str(link))[0] == 1
    assert _resolve(str(tmp_path / "plain.json")) == (None, str(tmp_path / "plain.json"))


def test_stdout_aliases_print(capsys: pytest.CaptureFixture[str]) -> None:
    assert write_output("-", "to stdout\n") is True
    assert capsys.readouterr().out == "to stdout\n"


def test_a_directory_or_a_missing_parent_is_one_clear_line(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^--output .*: is a directory, expected a file$"):
        write_output(tmp_path, TEXT)
    with pytest.raises(InputError, match=r"^--chart .*/nope/x\.svg: cannot write there \("):
        write_output(tmp_path / "nope" / "x.svg", TEXT, option="--chart")


def test_the_temporary_file_is_new_private_and_named_after_the_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What tempfile.mkstemp gave (tempfile is not imported: shutil and random behind it)."""
    fd, name = _mkstemp(tmp_path, ".r.json.")
    os.close(fd)
    assert os.path.isabs(name) and Path(name).parent == tmp_path
    assert Path(name).name.startswith(".r.json.") and len(Path(name).name) == len(".r.json.") + 12
    assert stat.S_IMODE(os.stat(name).st_mode) == 0o600
    draws = iter([b"\0" * 6, b"\0" * 6, b"\1" * 6])  # the first name is taken: another one
    monkeypatch.setattr(os, "urandom", lambda n: next(draws))
    fd1, first = _mkstemp(tmp_path, "x")
    fd2, second = _mkstemp(tmp_path, "x")
    os.close(fd1), os.close(fd2)
    assert first != second and Path(second).name == "x" + "01" * 6
    link = tmp_path / ("y" + "02" * 6)
    link.symlink_to(tmp_path / "elsewhere")
    draws = iter([b"\2" * 6, b"\3" * 6])
    fd3, third = _mkstemp(tmp_path, "y")  # never through an existing link
    os.close(fd3)
    assert third != str(link) and not (tmp_path / "elsewhere").exists()


class _CountingText(io.TextIOWrapper):
    """An interpreter's standard output whose text layer counts what is written through it."""

    written: int = 0

    def write(self, s: str) -> int:
        type(self).written += 1
        return super().write(s)


def _as_stdout(monkeypatch: pytest.MonkeyPatch, buffer: io.BufferedIOBase | io.RawIOBase,
               encoding: str = "utf-8") -> _CountingText:
    stdout = _CountingText(buffer, encoding=encoding, errors="replace")  # type: ignore[arg-type]
    _CountingText.written = 0
    monkeypatch.setattr(sys, "stdout", stdout)
    monkeypatch.setattr(sys, "__stdout__", stdout)
    return stdout


@pytest.mark.parametrize("buffered", [True, False], ids=["buffered", "unbuffered"])
def test_report_bytes_go_to_stdout_as_they_are_after_what_was_printed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, buffered: bool) -> None:
    """The report's UTF-8 bytes are written once, below the text layer (which would encode the
    text again), and after anything printed before them; ``python -u`` has a raw file there."""
    raw = io.FileIO(tmp_path / "out", "w")
    stdout = _as_stdout(monkeypatch, io.BufferedWriter(raw) if buffered else raw)
    stdout.write("before\n")
    write_stdout(TEXT.encode("utf-8"))
    assert _CountingText.written == 1  # "before" only
    stdout.flush()
    raw.close()
    assert (tmp_path / "out").read_bytes() == ("before\n" + TEXT).encode("utf-8")


def test_report_bytes_to_a_stdout_of_another_encoding_are_its_text(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    raw = io.FileIO(tmp_path / "out", "w")
    stdout = _as_stdout(monkeypatch, io.BufferedWriter(raw), encoding="latin-1")
    write_stdout(TEXT.encode("utf-8"))
    write_stdout(TEXT)
    stdout.flush()
    raw.close()
    assert (tmp_path / "out").read_bytes() == TEXT.encode("latin-1", "replace") * 2


def test_report_bytes_to_a_file_are_written_as_they_are(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    assert write_output(target, TEXT.encode("utf-8")) is False
    assert target.read_bytes() == TEXT.encode("utf-8")
    assert write_output(target, TEXT) is False
    assert target.read_bytes() == TEXT.encode("utf-8")
