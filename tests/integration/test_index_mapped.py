"""The index read through one memory map per file (`storage.index.mapped`): the same answers as
Whoosh's own file storage, the parts of a segment are views of one map (nothing copied), and
the file-like view reads, seeks and peeks as a file does."""

from __future__ import annotations

import io
import os
import random
from pathlib import Path
from typing import Any

import pytest
from whoosh import index as windex
from whoosh.fields import ID, NUMERIC, STORED, TEXT, Schema
from whoosh.qparser import QueryParser

from vault_brain.storage.index.mapped import MappedFile, MappedStorage, MappedView, open_dir


def build(folder: Path, docs: int = 600) -> None:
    schema = Schema(
        path=ID(stored=True, unique=True),
        body=TEXT(stored=True),
        rank=NUMERIC(stored=True, sortable=True),
        extra=STORED,
    )
    ix = windex.create_in(str(folder), schema)
    rng = random.Random(7)
    words = [f"w{i}" for i in range(300)]
    for batch in range(3):  # three segments
        writer = ix.writer()
        for n in range(batch * docs // 3, (batch + 1) * docs // 3):
            body = " ".join(rng.choice(words) for _ in range(rng.randint(3, 60)))
            writer.add_document(path=f"n{n}", body=body, rank=n, extra={"n": n, "tags": [1, 2]})
        writer.commit(merge=False)
    writer = ix.writer()
    for n in range(0, docs, 7):  # deletions in every segment
        writer.delete_by_term("path", f"n{n}")
    writer.commit(merge=False)


def answers(ix: windex.FileIndex) -> list[object]:
    out: list[object] = []
    with ix.searcher() as searcher:
        parser = QueryParser("body", ix.schema)
        for query in ("w1", "w2 w3", "w10 OR w200", "w5 AND w6", "w299"):
            hits = searcher.search(parser.parse(query), limit=20, sortedby=None)
            out.append([(h.docnum, round(h.score, 9), h["path"], h["extra"]) for h in hits])
        sorted_hits = searcher.search(parser.parse("w7"), limit=15, sortedby="rank")
        out.append([h["rank"] for h in sorted_hits])
        out.append(searcher.doc_count())
        out.append(sorted(searcher.reader().field_terms("body"))[:50])
    return out


def test_search_answers_equal_whooshs_own_storage(tmp_path: Path) -> None:
    build(tmp_path)
    mapped = open_dir(str(tmp_path))
    assert isinstance(mapped.storage, MappedStorage)
    assert answers(mapped) == answers(windex.open_dir(str(tmp_path)))


def test_a_segments_parts_are_views_of_one_map(tmp_path: Path) -> None:
    build(tmp_path)
    ix = open_dir(str(tmp_path))
    segments = ix._segments()
    assert len(segments) == 3
    for segment in segments:
        parts = segment.open_compound_file(ix.storage)
        names = parts.list()
        assert len(names) >= 4  # terms, postings, columns
        opened = [parts.open_file(name) for name in names]
        assert all(isinstance(part, MappedFile) for part in opened)
        # every part reads the very bytes of one map: none is a copy
        assert len({id(part._buf.obj) for part in opened}) == 1
        whole = ix.storage.open_file(segment.make_filename(segment.COMPOUND_EXT))
        for name, part in zip(names, opened, strict=True):
            offset, length = parts.range(name)
            assert length > 0 and part.get(0, length) == whole.get(offset, length)
        parts.close()


def test_an_open_searcher_outlives_its_files(tmp_path: Path) -> None:
    """A searcher keeps answering after its index folder is removed (a rebuild sweeps old
    generations while another process may still search them)."""
    (tmp_path / "ix").mkdir()
    build(tmp_path / "ix")
    ix = open_dir(str(tmp_path / "ix"))
    searcher = ix.searcher()
    query = QueryParser("body", ix.schema).parse("w1")
    before = [h["path"] for h in searcher.search(query)]
    for name in os.listdir(tmp_path / "ix"):
        os.unlink(tmp_path / "ix" / name)
    os.rmdir(tmp_path / "ix")
    after = [h["path"] for h in searcher.search(query)]
    assert after == before and before
    searcher.close()


def test_a_commit_between_listing_and_reading_the_table_of_contents_is_not_damage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whoosh lists the folder, then reads the latest table of contents it found; a writer
    (`vb watch`) that commits in between removes that one. The race is made to happen here:
    a real commit runs just before the first table of contents is opened (the hook stands in
    for the other process's timing, which a test cannot arrange)."""
    folder = tmp_path / "ix"
    folder.mkdir()
    build(folder, docs=30)
    opened = MappedStorage.open_file
    raced: list[str] = []

    def commit_first(self: MappedStorage, name: str, **kwargs: Any) -> Any:
        if name.endswith(".toc") and not raced:
            raced.append(name)
            writer = windex.open_dir(str(folder)).writer()
            writer.add_document(path="late", body="w1 late", rank=99, extra={})
            writer.commit(merge=False)  # (a new generation; the listed one is removed)
        return opened(self, name, **kwargs)

    monkeypatch.setattr(MappedStorage, "open_file", commit_first)
    ix = open_dir(str(folder))
    assert raced and not (folder / raced[0]).exists()  # the race did happen
    with ix.searcher() as searcher:
        assert "late" in [
            h["path"] for h in searcher.search(QueryParser("body", ix.schema).parse("late"))
        ]


def test_the_view_reads_seeks_and_peeks_as_a_file_does() -> None:
    rng = random.Random(3)
    data = bytes(rng.choice(b"ab\ncd\n\n") for _ in range(3000))
    view, model = MappedView(memoryview(data)), io.BytesIO(data)
    for _ in range(3000):
        op = rng.choice(["read", "read_all", "readline", "readline_limit", "seek", "tell", "peek"])
        n = rng.randint(0, 700)
        if op == "read":
            assert view.read(n) == model.read(n)
        elif op == "read_all":
            view.seek(rng.randint(0, 3100))
            model.seek(view.tell())
            assert view.read() == model.read()
        elif op == "readline":
            assert view.readline() == model.readline()
        elif op == "readline_limit":
            assert view.readline(n) == model.readline(n)
        elif op == "seek":
            whence = rng.choice([os.SEEK_SET, os.SEEK_CUR, os.SEEK_END])
            offset = n if whence == os.SEEK_SET else rng.randint(-400, 400)
            if whence != os.SEEK_SET and model.tell() + offset < 0 and whence == os.SEEK_CUR:
                offset = -model.tell()
            if whence == os.SEEK_END and len(data) + offset < 0:
                offset = -len(data)
            assert view.seek(offset, whence) == model.seek(offset, whence)
        elif op == "tell":
            assert view.tell() == model.tell()
        else:
            at = model.tell()
            assert data[at:].startswith(view.peek(n))
            assert view.tell() == at


def test_an_empty_file_opens_and_reads_nothing(tmp_path: Path) -> None:
    """(A memory map cannot be made of an empty file: it is read as a plain file.)"""
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "some").write_bytes(b"\x00\x00\x00\x07rest")
    storage = MappedStorage(str(tmp_path))
    empty = storage.open_file("empty")
    assert empty.read() == b""
    empty.close()
    some = storage.open_file("some")
    assert isinstance(some, MappedFile)
    assert some.read_int() == 7 and some.read() == b"rest" and some.get(4, 2) == b"re"
    some.close()
