"""The .xlsx reader is capped: a 1.4 MB workbook whose one cell inflates to 1.5 GB (a zip bomb) is refused in under
2 s and 200 MB of peak memory (before, ``audit`` held 3.2 GB for about two minutes); so are a sheet of too many
cells, too many shared strings and a gzip-compressed bomb. The caps are the module's ``MAX_*`` constants."""

from __future__ import annotations

import struct
import subprocess
import sys
import textwrap
import zipfile
import zlib
from pathlib import Path

import pytest

from vqaudit import xlsx, xlsx_sheet
from vqaudit.errors import VqauditError
from vqaudit.xlsx import read_xlsx_rows

NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
WORKBOOK = (
    f'<workbook xmlns="{NS}" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
    '<sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>'
)
RELS = (
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Target="worksheets/sheet1.xml"/></Relationships>'
)
CHUNK = 16 * 2**20
BOMB_CHUNKS = 90  # 90 x 16 MiB = 1.41 GiB (1.5 GB) in one cell


def _entry(name: str, data: bytes, crc: int, size: int, offset: int) -> tuple[bytes, bytes]:
    """A deflated zip entry's local header + data, and its central-directory record (PKWARE APPNOTE 4.3.7, 4.3.12)."""
    raw = name.encode()
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0x21, crc, len(data), size, len(raw), 0) + raw + data
    central = (
        struct.pack(
            "<IHHHHHHIIIHHHHHII",
            0x02014B50,
            20,
            20,
            0,
            8,
            0,
            0x21,
            crc,
            len(data),
            size,
            len(raw),
            0,
            0,
            0,
            0,
            0,
            offset,
        )
        + raw
    )
    return local, central


def write_bomb(path: Path, declared: int | None = None) -> None:
    """A workbook whose sheet is one inline-string cell of 1.41 GiB of 'A', deflated to about 1.4 MB.

    ``declared``: the uncompressed size the zip records for the sheet (default: the true size); a bomb may lie.

    The deflate stream is one 16 MiB block of 'A' compressed after a full flush (which resets the compressor's
    history, RFC 1951 and zlib's Z_FULL_FLUSH), repeated: each repetition compresses to the same bytes, so the
    bomb is made in a second instead of compressing 1.5 GB.
    """
    head = f'<worksheet xmlns="{NS}"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>'.encode()
    tail = b"</t></is></c></row></sheetData></worksheet>"
    block = b"A" * CHUNK
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = comp.compress(head) + comp.flush(zlib.Z_FULL_FLUSH)
    same = comp.compress(block) + comp.flush(zlib.Z_FULL_FLUSH)
    assert comp.compress(block) + comp.flush(zlib.Z_FULL_FLUSH) == same  # the repetition is exact
    data = first + same * BOMB_CHUNKS + comp.compress(tail) + comp.flush(zlib.Z_FINISH)
    crc = zlib.crc32(head)
    for _ in range(BOMB_CHUNKS):
        crc = zlib.crc32(block, crc)
    crc = zlib.crc32(tail, crc)
    size = len(head) + CHUNK * BOMB_CHUNKS + len(tail)
    parts: list[tuple[str, bytes, int, int]] = []
    for name, text in (("xl/workbook.xml", WORKBOOK), ("xl/_rels/workbook.xml.rels", RELS)):
        c = zlib.compressobj(9, zlib.DEFLATED, -15)
        parts.append((name, c.compress(text.encode()) + c.flush(), zlib.crc32(text.encode()), len(text.encode())))
    parts.append(("xl/worksheets/sheet1.xml", data, crc, size if declared is None else declared))
    locals_, centrals = b"", b""
    for name, blob, c32, n in parts:
        local, central = _entry(name, blob, c32, n, len(locals_))
        locals_ += local
        centrals += central
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(parts), len(parts), len(centrals), len(locals_), 0)
    path.write_bytes(locals_ + centrals + end)


@pytest.fixture(scope="module")
def bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bomb") / "model_MMBench.xlsx"
    write_bomb(path)
    return path


@pytest.fixture(scope="module")
def lying_bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same bomb, its zip claiming the sheet inflates to 200 MiB (under the part cap): the cell cap stops it."""
    path = tmp_path_factory.mktemp("bomb") / "model_MMBench.xlsx"
    write_bomb(path, declared=200 * 2**20)
    return path


def test_the_bomb_is_a_workbook_of_one_huge_cell(bomb: Path) -> None:
    assert bomb.stat().st_size < 1_500_000
    with zipfile.ZipFile(bomb) as archive:
        info = archive.getinfo("xl/worksheets/sheet1.xml")
        assert info.file_size == 90 * 16 * 2**20 + 173  # the cell plus 173 bytes of XML around it
        with archive.open(info) as handle:
            start = handle.read(2 * CHUNK)
    assert start.startswith(f'<worksheet xmlns="{NS}">'.encode()) and start.endswith(b"A" * CHUNK)


MEASURE = textwrap.dedent("""
    import resource, sys, time
    from pathlib import Path
    from vqaudit.errors import VqauditError
    from vqaudit.xlsx import read_xlsx_rows
    start = time.perf_counter()
    try:
        read_xlsx_rows(Path(sys.argv[1]))
        print("READ")
    except VqauditError as exc:
        print(exc)
    print(time.perf_counter() - start)
    # the peak of this process's own memory (VmHWM, KiB): ru_maxrss would also count the pytest worker this
    # process was forked from (Linux keeps the larger high-water mark across exec)
    hwm = [line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")]
    print(hwm[0] if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
""")


@pytest.mark.parametrize(
    ("which", "expected"),
    [
        (
            "bomb",
            "xl/worksheets/sheet1.xml inflates to more than 256 MiB (the reader's limit per part; it declares "
            "1509949613 bytes)",
        ),
        ("lying_bomb", "cell A1 holds more than 4194304 characters (the reader's limit per cell; a zip bomb?)"),
    ],
)
def test_the_bomb_is_refused_in_under_2_s_and_200_mb(which: str, expected: str, request: pytest.FixtureRequest) -> None:
    path: Path = request.getfixturevalue(which)
    done = subprocess.run([sys.executable, "-c", MEASURE, str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    message, seconds, max_rss_kib = done.stdout.strip().splitlines()
    assert message == f"{path}: {expected}"
    assert float(seconds) < 2.0
    assert int(max_rss_kib) < 200 * 1024, f"peak {int(max_rss_kib) // 1024} MiB"


def test_the_cli_refuses_the_bomb_in_one_line(lying_bomb: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "vqaudit",
            "audit",
            str(lying_bomb),
            "--benchmark",
            "chartqa",
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    lines = [line for line in done.stderr.strip().splitlines() if not line.startswith("progress: ")]
    assert len(lines) == 1 and "cell A1 holds more than 4194304 characters" in lines[0], done.stderr
    out = tmp_path / "out"
    assert not out.exists() or [p.name for p in out.iterdir()] == [".vqaudit.lock"]  # no report written


def _workbook(path: Path, sheet: str, shared: str | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("xl/workbook.xml", WORKBOOK)
        archive.writestr("xl/_rels/workbook.xml.rels", RELS)
        archive.writestr(
            "xl/worksheets/sheet1.xml", f'<worksheet xmlns="{NS}"><sheetData>{sheet}</sheetData></worksheet>'
        )
        if shared is not None:
            archive.writestr("xl/sharedStrings.xml", f'<sst xmlns="{NS}">{shared}</sst>')
    return path


def test_a_cell_far_to_the_right_is_refused_before_padding(tmp_path: Path) -> None:
    # XFD is column 16,384: 305 rows of that width are 4,997,120 cells, 306 rows 5,013,504, past MAX_CELLS (5e6)
    rows = "".join(f'<row r="{i}"><c r="XFD{i}"><v>1</v></c></row>' for i in range(1, 401))
    with pytest.raises(VqauditError, match=r"w\.xlsx: cell XFD306 lies beyond the reader's limit of 5000000 cells"):
        read_xlsx_rows(_workbook(tmp_path / "w.xlsx", rows))


def test_too_many_cells_and_shared_strings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(xlsx_sheet, "MAX_CELLS", 6)  # the worksheet reader checks the cell count
    monkeypatch.setattr(xlsx, "MAX_SHARED_STRINGS", 2)
    three = '<row r="1"><c r="A1"><v>1</v></c><c r="B1"><v>2</v></c><c r="C1"><v>3</v></c></row>'
    one = '<row r="2"><c r="A2"><v>4</v></c></row>'
    assert read_xlsx_rows(_workbook(tmp_path / "ok.xlsx", three + one)) == [["1", "2", "3"], ["4", None, None]]
    with pytest.raises(
        VqauditError,
        match=r"c\.xlsx: the first sheet holds more than 6 cells, counted as rows times "
        r"its widest row \(3 rows of 3",
    ):
        read_xlsx_rows(_workbook(tmp_path / "c.xlsx", three + one + one))  # 3 x 3 = 9 cells once padded
    with pytest.raises(VqauditError, match=r"d\.xlsx: cell C1 lies beyond the reader's limit of 6 cells"):
        read_xlsx_rows(_workbook(tmp_path / "d.xlsx", three * 3))  # the third row's C1 is cell 3 x 3
    with pytest.raises(VqauditError, match=r"s\.xlsx: xl/sharedStrings.xml holds more than 2 shared strings"):
        read_xlsx_rows(_workbook(tmp_path / "s.xlsx", three, "<si><t>a</t></si>" * 3))


def test_a_part_inflating_past_its_cap_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(xlsx, "MAX_PART_BYTES", 3 * 2**20)
    many = '<row r="1"><c r="A1"><v>1</v></c></row>' * 100_000  # 3.8 MB of sheet XML
    with pytest.raises(VqauditError, match=r"p\.xlsx: xl/worksheets/sheet1.xml inflates to more than 3 MiB"):
        read_xlsx_rows(_workbook(tmp_path / "p.xlsx", many))


def test_a_gzip_bomb_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(xlsx, "MAX_WORKBOOK_BYTES", 2**20)
    path = tmp_path / "g.xlsx.gz"
    path.write_bytes(zlib.compress(b"\0" * 2**21, wbits=31))  # gzip framing
    with pytest.raises(VqauditError, match=r"g\.xlsx\.gz: the gzip-compressed workbook inflates to more than 1 MiB"):
        read_xlsx_rows(path)
