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


def test_every_preset_is_one_record_that_names_its_source():
    from parallelsel.core._check import Catalogue

    for catalogue in (ps.MODELS, ps.DEVICES, ps.LINKS, ps.RECIPES):
        assert all(isinstance(v.source, str) and len(v.source) > 15 for v in catalogue.values()), catalogue.kind
    assert ps.DEVICES["a100-80gb"] == ps.Device("A100-80GB", 81920 * 2**20, 312e12, intra="nvlink3", inter="ib-hdr",
                                               hbm_bandwidth=2039e9, gemm_efficiency=ps.DEVICES["a100-80gb"].gemm_efficiency,
                                               memory_efficiency=0.9)  # the source is not part of the numbers' identity
    with pytest.raises(ValueError, match="device presets without a source: x"):
        Catalogue("device", {"x": ps.Device("X", 1e9, 1e12)})
