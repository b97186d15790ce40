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
# -- device parts: each preset says which part it is (datasheet figures, tests/../research notes) ----------
_DATASHEET = {  # key: (dense BF16 TFLOP/s, dense FP8 TFLOP/s or 0, HBM GB/s)
    "a100-40gb": (312, 0, 1555), "a100-80gb": (312, 0, 2039),            # NVIDIA A100 datasheet, SXM4
    "a100-pcie-40gb": (312, 0, 1555), "a100-pcie-80gb": (312, 0, 1935),  # NVIDIA A100 datasheet, PCIe
    "h100-sxm-80gb": (989, 1979, 3350), "h100-pcie-80gb": (756, 1513, 2000),  # NVIDIA H100 datasheet (sparse / 2)
    "h100-nvl-94gb": (835, 1670, 3900),   # torchtitan tools/utils.py L166-167 (835e12)
    "h800-sxm-80gb": (989, 1979, 3350),   # H100 SXM compute, NVLink cut
    "h20-96gb": (148, 296, 4000),         # torchtitan tools/utils.py L175-183 (148e12)
    "b200-180gb": (2250, 4500, 8000),     # NVIDIA HGX B200 specifications, per GPU (4.5 / 9 PFLOPS sparse); DGX B200
    "gb200-186gb": (2500, 5000, 8000),    # NVIDIA GB200 NVL72 specifications, per GPU (5 / 10 PFLOPS sparse)
}


@pytest.mark.parametrize("key", sorted(_DATASHEET))
def test_device_parts_carry_their_datasheet_figures(key):
    d = ps.DEVICES[key]
    bf16, fp8, hbm = _DATASHEET[key]
    assert d.peak_flops == bf16 * 1e12 and d.fp8_flops == fp8 * 1e12 and d.hbm_bandwidth == hbm * 1e9
    assert d.source


def test_every_device_names_its_source():
    for key, d in ps.DEVICES.items():
        assert d.source


def test_torchtitans_power_capped_h100_sits_between_nvl_and_sxm():
    # benchmarks/llama3_h100_202412_torchtitan.md footnote 2: "actual peak TFLOPs number is between SXM and NVL";
    # 96 GB HBM2e at 2.4 TB/s, 500 W.
    d = ps.DEVICES["h100-hbm2e-96gb"]
    assert ps.DEVICES["h100-nvl-94gb"].peak_flops < d.peak_flops < ps.DEVICES["h100-sxm-80gb"].peak_flops
    assert d.hbm_bandwidth == 2.4e12 and "500 W" in d.source


def test_h800_nvlink_is_cut_to_400_gb_s_total():
    c = ps.Cluster(ps.DEVICES["h800-sxm-80gb"])
    assert c.intra.bandwidth * 2 == 400e9


@pytest.mark.parametrize("key,mib,sms,share,fp8_share", [("b200-180gb", 183359, 148, 0.776, 0.763),
                                                       ("gb200-186gb", 189471, 152, 0.729, 0.723)])
def test_blackwell_parts_reach_mamf_finders_measured_ceilings_at_the_training_share(key, mib, sms, share, fp8_share):
    # stas00/ml-engineering compute/accelerator/README.md @68cd2e5, mamf-finder's BF16 and FP8 tables, "Efficiency"
    # column (MAMF / theory): B200 77.6% / 76.3%, GB200 72.9% / 72.3%. A step's GEMMs reach that share at the one
    # training share fitted on A100, never a per-part number.
    from parallelsel.core.hardware import TRAINING_SHARE

    d = ps.DEVICES[key]
    assert round(d.gemm_efficiency / TRAINING_SHARE, 3) == share
    assert round(d.fp8_efficiency / TRAINING_SHARE, 3) == fp8_share
    # nvidia-smi's memory.total and the SM count reported for each part.
    assert d.memory == mib * 2**20 and d.sms == sms
    # NVLink 5: 1.8 TB/s total, 900 GB/s each way; nodes joined by ConnectX-7 NDR as in DGX H100.
    c = ps.Cluster(d)
    assert c.intra is ps.LINKS["nvlink5"] and c.intra.bandwidth == 900e9 and c.inter is ps.LINKS["ib-ndr"]
