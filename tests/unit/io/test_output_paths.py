"""Output-path errors name the user's path, never the temporary file, and come before the work."""

from __future__ import annotations

import numpy as np
import pytest

from harmonium.errors import HarmoniumError, OutputPathError
from harmonium.io import atomic_write_bytes, check_writable, check_writable_folder, write_model_file


def test_missing_folder_names_the_target_not_the_temporary_file(tmp_path):
    target = tmp_path / "missing_dir" / "m.hmn"
    with pytest.raises(OutputPathError) as info:
        atomic_write_bytes(target, b"x")
    text = str(info.value)
    assert f"Cannot write '{target}'" in text and "does not exist" in text
    assert ".tmp" not in text and "Errno" not in text
    # still the OSError it was, for callers that catch those
    assert isinstance(info.value, FileNotFoundError) and isinstance(info.value, HarmoniumError)
    with pytest.raises(OutputPathError, match=r"m\.hmn'.*does not exist") as info:
        write_model_file(target, cls="T", params={}, arrays={"a": np.zeros(2)})
    assert ".tmp" not in str(info.value)


def test_a_folder_in_the_way(tmp_path):
    with pytest.raises(OutputPathError, match=rf"Cannot write '{tmp_path}': it is a folder; name a file"):
        atomic_write_bytes(tmp_path, b"x")
    with pytest.raises(OutputPathError, match="it is a folder"):
        check_writable(tmp_path)


def test_check_writable_leaves_nothing_behind(tmp_path):
    assert check_writable(tmp_path / "m.hmn") == tmp_path / "m.hmn"
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(OutputPathError, match=r"the folder '.*nope' does not exist; create it first"):
        check_writable(tmp_path / "nope" / "m.hmn")
    (tmp_path / "afile").write_text("x")
    with pytest.raises(OutputPathError, match=r"afile' is not a folder"):
        check_writable(tmp_path / "afile" / "m.hmn")


def test_check_writable_folder(tmp_path):
    assert check_writable_folder(tmp_path / "new" / "deeper") == tmp_path / "new" / "deeper"
    assert list(tmp_path.iterdir()) == []  # created later by the writer, not by the check
    (tmp_path / "afile").write_text("x")
    with pytest.raises(OutputPathError, match="a file of that name is in the way"):
        check_writable_folder(tmp_path / "afile")
    with pytest.raises(OutputPathError, match=r"afile' is a file, not a folder"):
        check_writable_folder(tmp_path / "afile" / "sub")


def test_save_checks_the_path_before_serialising(tmp_path, monkeypatch):
    from harmonium.corpus import Corpus
    from harmonium.estimators import LDA

    model = LDA(2, n_iter=2, random_state=0).fit(Corpus(np.array([[2, 1, 0], [0, 1, 3]]), ["a", "b", "c"]))

    def boom():
        raise AssertionError("serialised before the path was checked")

    monkeypatch.setattr(model, "_state_for_file", boom)
    with pytest.raises(OutputPathError, match=r"Cannot write '.*missing_dir/m\.hmn': the folder"):
        model.save(tmp_path / "missing_dir" / "m.hmn")
