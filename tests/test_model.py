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


def test_bare_transformer_is_one_real_architecture():
    # Without architecture keywords a Transformer is GPT-2/GPT-3's: GPT-2 XL's shape alone gives its
    # published 1,557,611,200 parameters (learned positions, LayerNorm, biases, tied embeddings).
    bare = ps.Transformer(layers=48, hidden=1600, heads=25, seq_len=1024, vocab=50257)
    assert bare.params == 1_557_611_200
    assert (bare.gated_mlp, bare.tied_embeddings, bare.position, bare.bias, bare.norm) == (
        False, True, "learned", True, "layernorm")
    # One keyword away: Llama's (SwiGLU, rotary, RMSNorm, no biases, untied head; FFN 2/3 x 4h
    # rounded up to 256) -- Llama-2 7B's 6,738,415,616 parameters from its shape alone.
    llama = ps.Transformer(layers=32, hidden=4096, heads=32, seq_len=4096, vocab=32000, architecture="llama")
    assert llama.ffn_hidden == 11008 and llama.params == 6_738_415_616
    # An explicit field still overrides the architecture.
    assert ps.Transformer(layers=2, hidden=64, heads=4, seq_len=8, vocab=10, gated_mlp=True).gated_mlp is True
    with pytest.raises(ValueError, match="architecture='t5'"):
        ps.Transformer(layers=2, hidden=64, heads=4, seq_len=8, vocab=10, architecture="t5")
