"""Transformer FLOP accounting per pipeline stage."""

import pytest

import parallelsel as ps


def test_stage_forward_flops_put_the_logits_on_the_last_stage():
    m = ps.MODELS["llama3-8b"]
    fw = m.forward_flops_per_token()
    stages = m.stage_forward_flops((8, 8, 8, 8))
    # The stages add up to the whole forward pass; only the last one carries 2 V h of logits.
    assert sum(stages) == pytest.approx(sum(fw.values()))
    assert stages[0] == stages[1] == stages[2]
    assert stages[3] - stages[0] == pytest.approx(2 * m.vocab * m.hidden)


@pytest.mark.parametrize("split", [(), (8, 8, 8), (0, 16, 16), (16, 16, 1)])
def test_stage_split_must_cover_every_layer(split):
    with pytest.raises(ValueError, match="split"):
        ps.MODELS["llama3-8b"].stage_forward_flops(split)
