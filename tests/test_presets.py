"""Preset catalogues: lower-case keys, and an unknown key is a clear ValueError (and KeyError)."""

import pytest

import parallelsel as ps


@pytest.mark.parametrize("catalogue,kind", [(ps.MODELS, "model"), (ps.DEVICES, "device"), (ps.LINKS, "link"),
                                            (ps.RECIPES, "recipe")])
def test_unknown_preset_names_itself_and_the_known_keys(catalogue, kind):
    with pytest.raises(ValueError, match=rf"{kind}='nope': unknown preset; known: .*") as info:
        catalogue["nope"]
    assert isinstance(info.value, KeyError)
    assert all(key in str(info.value) for key in catalogue)
    assert all(key == key.lower() for key in catalogue)
    assert catalogue.get("nope") is None  # dict behaviour is kept


def test_links_cover_each_kind_of_interconnect():
    # LINKS keys name the kind of interconnect ("nvlink", "pcie", "ib", "eth"), so scripts can pick links by kind.
    for word in ("nvlink", "pcie", "ib", "eth"):
        assert any(word in key for key in ps.LINKS)
