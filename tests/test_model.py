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


QWEN3_30B_A3B = dict(layers=48, hidden=2048, heads=32, kv_heads=4, head_dim=128, ffn_hidden=768, experts=128, top_k=8,
                     vocab=151936, seq_len=4096, architecture="llama")
QWEN3_235B_A22B = dict(layers=94, hidden=4096, heads=64, kv_heads=4, head_dim=128, ffn_hidden=1536, experts=128,
                       top_k=8, vocab=151936, seq_len=4096, architecture="llama")


@pytest.mark.parametrize("shape,total,active,non_embedding", [
    # Qwen3 model cards (Qwen/Qwen3-30B-A3B, Qwen/Qwen3-235B-A22B on Hugging Face; shapes from their config.json:
    # head_dim 128 while hidden / heads is 64): "30.5B in total and 3.3B activated", "Non-Embedding: 29.9B";
    # "235B in total and 22B activated", "Non-Embedding: 234B". (The QK norms, 256 numbers a layer, are not counted.)
    (QWEN3_30B_A3B, 30.5e9, 3.3e9, 29.9e9), (QWEN3_235B_A22B, 235e9, 22e9, 234e9)])
def test_a_head_width_other_than_hidden_over_heads_gives_the_published_parameter_counts(shape, total, active,
                                                                                      non_embedding):
    m = ps.Transformer(**shape)
    unit = 0.1e9 if total < 1e11 else 1e9   # the cards print to 0.1B and to 1B: within one unit of the last digit
    assert abs(m.params - total) < unit and abs(m.active_params - active) < unit
    assert abs(m.params - m.embedding_params - m.head_params - non_embedding) < unit
    # hidden // heads would give Q and the output projection half their width: the count misses the card.
    narrow = ps.Transformer(**{**shape, "head_dim": None})
    assert abs(narrow.params - total) > 3 * unit


def test_head_width_flops_match_megatrons_count_with_kv_channels():
    # Megatron-LM megatron/training/training.py num_floating_point_operations: per layer and token,
    # 12 h^2 ((1 + g/a + s/h) q/h + k f/h (3/2 if SwiGLU)) with q = kv_channels x heads, and 12 V h for the logits
    # (its router term left out here, the router being 2 h E a token in this library).
    m = ps.Transformer(**QWEN3_30B_A3B)
    h, a, g, s, f, k = m.hidden, m.heads, m.kv_heads, m.seq_len, m.ffn_hidden, m.top_k
    q = 128 * a
    megatron = 12 * m.layers * h * h * ((1 + g / a + s / h) * q / h + k * f / h * 3 / 2) + 6 * m.vocab * h
    router = 3 * 2 * m.layers * h * m.experts
    assert m.flops_per_token() - router == pytest.approx(megatron, rel=1e-12)


def test_head_dim_is_checked_like_every_shape_field():
    with pytest.raises(ValueError, match="head_dim=0"):
        ps.Transformer(**{**QWEN3_30B_A3B, "head_dim": 0})
    with pytest.raises(ValueError, match="hidden=100: must be divisible by heads=3 .or give head_dim"):
        ps.Transformer(layers=2, hidden=100, heads=3, seq_len=8, vocab=10)
    assert ps.Transformer(layers=2, hidden=100, heads=3, seq_len=8, vocab=10, head_dim=32).q_dim == 96


def test_dropout_follows_the_architecture_and_the_configurations():
    # GPT trains with dropout (Megatron-LM's 0.1 default, NeMo's gpt3 configs' hidden_dropout 0.1); Llama and
    # Nemotron without (Meta's model code has no dropout; NeMo-Framework-Launcher llama2_7b.yaml and nemotron_*.yaml
    # @1a7171d7 set hidden, attention and ffn dropout to 0.0).
    from parallelsel.course.stack_runs import NEMOTRON

    assert ps.MODELS["gpt3-175b"].dropout and ps.Transformer(layers=2, hidden=64, heads=4, seq_len=8, vocab=10).dropout
    assert not any(ps.MODELS[k].dropout for k in ("llama2-7b", "llama3-8b", "llama3-405b", "mixtral-8x7b"))
    assert not any(m.dropout for m in NEMOTRON.values())
    assert ps.Transformer(layers=2, hidden=64, heads=4, seq_len=8, vocab=10, architecture="llama", dropout=True).dropout
    with pytest.raises(ValueError, match="dropout"):
        ps.Transformer(layers=2, hidden=64, heads=4, seq_len=8, vocab=10, dropout="yes")


def test_a_wide_query_sets_the_gemm_shapes_and_saved_tensors():
    # Qwen3-30B-A3B at TP2: Megatron's fused QKV is a ColumnParallelLinear of hidden -> q + 2 kv (4096 + 2 x 512)
    # split by TP, and the output projection a RowParallelLinear of q -> hidden whose input is split by TP.
    from parallelsel.core.kernels import layer_gemms
    from parallelsel.core.memory import activations_per_layer

    m = ps.Transformer(**QWEN3_30B_A3B)
    g = {k.name: k for k in layer_gemms(m, 4096, tp=2)}
    assert (g["qkv"].n, g["qkv"].k) == (2560, 2048) and (g["proj"].n, g["proj"].k) == (2048, 2048)
    # Q and the attention output are 4096 wide, twice the stream, and K and V 4 x 128: against the same shape with
    # heads of 64 the stored activations grow by 2 x 2048 + 2 x 256 elements a token in 16 bits, split by TP.
    narrow = ps.Transformer(**{**QWEN3_30B_A3B, "head_dim": None})
    grow = activations_per_layer(m, 1, tp=2, sp=True) - activations_per_layer(narrow, 1, tp=2, sp=True)
    assert grow == m.seq_len * (2 * 2048 + 2 * 256) * 2 / 2


def test_records_hash_once_and_never_carry_the_hash_across_processes():
    # The search keys its caches on models, devices and plans; the hash is computed once per record. A pickled
    # record drops it (string hashes differ between processes), so an equal record elsewhere still matches.
    import pickle
    import subprocess
    import sys

    m = ps.MODELS["llama3-8b"]
    assert hash(m) == hash(ps.Transformer(**{f: getattr(m, f) for f in ("layers", "hidden", "heads", "seq_len",
                                                                        "vocab", "ffn_hidden", "kv_heads")},
                                          architecture="llama", name=m.name))
    blob = pickle.dumps((m, ps.Plan(dp=2, tp=4), ps.DEVICES["h100-sxm-80gb"]))
    code = ("import pickle, sys, parallelsel as ps; m, p, d = pickle.loads(sys.stdin.buffer.read()); "
            "print(m in {ps.MODELS['llama3-8b']}, p in {ps.Plan(dp=2, tp=4)}, d in {ps.DEVICES['h100-sxm-80gb']})")
    out = subprocess.run([sys.executable, "-c", code], input=blob, capture_output=True, check=True,
                         env={"PYTHONHASHSEED": "12345", "PATH": ""}).stdout.decode().split()
    assert out == ["True", "True", "True"]
